"""Page through a spill file of any size, including files that are one giant line.

The pager opens a file read-only and answers at once: the first page is read straight
from the start of the file while a :class:`~doctor.spill.line_index.LineIndex` is built
in the background; later pages start from the nearest index checkpoint (or the end of
the previous page) and walk forward at most a few hundred kilobytes.

Every read is bounded. Lines are cut at ``max_line_chars`` for :meth:`Pager.page`, and
the rest of a long line is reached through :meth:`Pager.char_window`, which walks the
line in 1 MiB blocks and remembers where each block started, so moving sideways in a
1 GB line costs one block after the first pass.

Positions are ``(line, char)``, both zero-based. A char is a code point of the line
decoded as UTF-8 with ``errors="replace"`` (so invalid bytes show as U+FFFD). Positions
are exact for valid UTF-8; inside invalid byte runs a position may be off by the length
of the run, because which bytes a U+FFFD stands for is a decoder detail.
"""

from __future__ import annotations

import codecs
import enum
import os
import re
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Self

from doctor.safety.reads import Refused, open_regular
from doctor.sources.base import os_error_reason
from doctor.spill.errors import SpillFileError
from doctor.spill.line_index import IndexProgress, LineIndex, scan_lines

READ_BLOCK = 64 * 1024
CHAR_BLOCK = 1 << 20
SEARCH_BLOCK = 4 << 20
# A regex match that straddles two search windows is found only if it is at most this long.
REGEX_OVERLAP = 64 * 1024
BINARY_SNIFF_BYTES = 8192
BINARY_CONTROL_RATIO = 0.3
HEX_ROW_BYTES = 16
_REMEMBERED_LINES = 8

# Bytes that are not control bytes, plus the control bytes ordinary text uses; deleting
# them from a sample leaves the suspicious ones.
_TEXTLIKE = bytes(range(0x20, 0x7F)) + bytes(range(0x80, 0x100)) + b"\t\n\r\f\b\x1b"


class FileChange(enum.Enum):
    """What :meth:`Pager.refresh` found on disk."""

    UNCHANGED = "unchanged"
    GREW = "grew"
    TRUNCATED = "truncated"
    ROTATED = "rotated"


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a page: its text without the newline (nor a ``\\r`` before it)."""

    number: int
    text: str
    byte_offset: int
    truncated: bool  # the text is a prefix; read the rest with Pager.char_window


@dataclass(frozen=True, slots=True)
class Match:
    """Where a search matched: start position and length, in chars."""

    line: int
    char: int
    length: int


def looks_binary(sample: bytes) -> bool:
    """NUL bytes, or many control bytes, mean a hex view will serve better than text."""
    if b"\0" in sample:
        return True
    if not sample:
        return False
    return len(sample.translate(None, _TEXTLIKE)) / len(sample) > BINARY_CONTROL_RATIO


def _decoder() -> codecs.IncrementalDecoder:
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _complete_prefix_length(raw: bytes) -> int:
    """Length of ``raw`` without a UTF-8 sequence cut off at its end."""
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte < 0x80:
            return len(raw)
        if byte >= 0xC0:
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(raw) - back if needed > back else len(raw)
    return len(raw)


def _char_start_at_or_after(raw: bytes, index: int) -> int:
    """Move ``index`` past at most three continuation bytes, onto a char start."""
    for _ in range(3):
        if index < len(raw) and 0x80 <= raw[index] < 0xC0:
            index += 1
    return index


def _offset_of_char(block: bytes, k: int, state: tuple[bytes, int] = (b"", 0)) -> int:
    """Byte offset in ``block`` where char ``k`` starts, the decoder carrying ``state`` in."""
    if k <= 0:
        return 0
    if not state[0]:
        if block.isascii():
            return k
        prefix = block.decode("utf-8", "replace")[:k]
        if "\ufffd" not in prefix:
            return len(prefix.encode("utf-8"))
    decoder = _decoder()
    decoder.setstate(state)
    emitted = 0
    for piece_start in range(0, len(block), 4096):
        before = decoder.getstate()
        produced = len(decoder.decode(block[piece_start : piece_start + 4096]))
        if emitted + produced > k:
            decoder.setstate(before)
            for index in range(piece_start, min(len(block), piece_start + 4096)):
                pending = len(decoder.getstate()[0])
                produced = len(decoder.decode(block[index : index + 1]))
                if emitted + produced > k:
                    return index - pending if emitted == k else index
                emitted += produced
        emitted += produced
    return len(block)


class _CharMarks:
    """Where the 1 MiB blocks of recently walked long lines start, in chars and bytes.

    Each mark is a point where the decoder had nothing pending, so a walk may restart
    there with a fresh decoder and count exactly as if it came from the line start.
    """

    def __init__(self) -> None:
        self._lines: OrderedDict[int, tuple[array, array]] = OrderedDict()

    def nearest(self, line_start: int, *, char: int | None = None, byte: int | None = None) -> tuple[int, int]:
        marks = self._lines.get(line_start)
        if marks is None:
            return 0, line_start
        self._lines.move_to_end(line_start)
        chars, offsets = marks
        slot = bisect_right(chars, char) - 1 if char is not None else bisect_right(offsets, byte) - 1
        return (chars[slot], offsets[slot]) if slot >= 0 else (0, line_start)

    def add(self, line_start: int, char: int, byte: int) -> None:
        chars, offsets = self._lines.setdefault(line_start, (array("Q"), array("Q")))
        if not chars or char > chars[-1]:
            chars.append(char)
            offsets.append(byte)
        while len(self._lines) > _REMEMBERED_LINES:
            self._lines.popitem(last=False)


class Pager:
    """Read-only, bounded-memory paging, search and follow over one file.

    Call it from one thread (the UI's worker); only the index runs beside it.
    """

    def __init__(self, path: str | os.PathLike[str], *, index: bool = True,
                 opener: Callable[[], int] | None = None) -> None:
        """`opener` returns a read-only descriptor on the file (default: `doctor.safety.reads.open_regular`
        of `path`, a regular file only); an edge that contains paths passes its own safe open."""
        self.path = os.fspath(path)
        self._opener = opener or (lambda: open_regular(self.path))
        self._background_index = index
        self._fd = -1
        self._open()

    # -- opening and following ---------------------------------------------------

    def _open(self) -> None:
        try:
            fd = self._opener()
        except Refused as refused:
            raise SpillFileError(self.path, refused.reason) from None
        except OSError as error:
            raise SpillFileError(self.path, os_error_reason(error)) from None
        info = os.fstat(fd)
        self._fd = fd
        self._identity = (info.st_dev, info.st_ino)
        self._reset(info.st_size)

    def _reset(self, size: int) -> None:
        """Forget everything learnt about the content and start indexing afresh."""
        self._size = size
        self._anchor = (0, 0)
        self._long_line_ends: OrderedDict[int, int] = OrderedDict()
        self._marks = _CharMarks()
        self.is_binary = looks_binary(self._read(0, BINARY_SNIFF_BYTES))
        self._index = LineIndex(self._fd, size)
        if self._background_index:
            self._index.start()

    def refresh(self) -> FileChange:
        """Follow mode: notice growth, truncation or rotation since the last look.

        Rotation (the path now names another file) reopens the path; truncation
        (the file got smaller) reindexes from scratch. A path that is momentarily
        missing mid-rotation counts as unchanged, so the old content stays visible.
        """
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return FileChange.UNCHANGED
        if (info.st_dev, info.st_ino) != self._identity:
            self.close()
            self._open()
            return FileChange.ROTATED
        size = os.fstat(self._fd).st_size
        if size < self._size:
            self._index.cancel()
            self._reset(size)
            return FileChange.TRUNCATED
        if size > self._size:
            if self._size < BINARY_SNIFF_BYTES:
                self.is_binary = looks_binary(self._read(0, BINARY_SNIFF_BYTES, limit=size))
            self._size = size
            self._index.extend(size)
            return FileChange.GREW
        return FileChange.UNCHANGED

    def close(self) -> None:
        """Stop the index thread, then release the descriptor it reads through."""
        if self._fd >= 0:
            self._index.cancel()
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- what is known -----------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    @property
    def line_count(self) -> int | None:
        """Exact once indexed, None before; ``progress.lines_seen`` is a lower bound."""
        return self._index.line_count

    @property
    def progress(self) -> IndexProgress:
        return self._index.progress

    @property
    def index_memory_bytes(self) -> int:
        return self._index.memory_bytes

    def wait_until_indexed(self, timeout: float | None = None) -> bool:
        if not self._background_index:
            self._index.start()
        return self._index.wait(timeout)

    # -- lines -------------------------------------------------------------------

    def byte_of_line(self, line: int) -> int | None:
        """Byte offset where ``line`` starts, or None past the last line."""
        if line < 0:
            raise ValueError(f"line must be >= 0, got {line}")
        base_line, base_offset = self._index.checkpoint_for_line(line)
        anchor_line, anchor_offset = self._anchor
        if base_line < anchor_line <= line:
            base_line, base_offset = anchor_line, anchor_offset
        seen, _, offset = scan_lines(self._fd, base_offset, self._size, line - base_line)
        if seen < line - base_line or offset >= self._size:
            return None
        self._anchor = (line, offset)
        return offset

    def page(self, offset_line: int, limit: int, *, max_line_chars: int = 2000) -> list[Line]:
        """Lines ``offset_line`` to ``offset_line + limit - 1`` (zero-based, like read_file).

        A trailing newline ends the last line instead of opening an empty one (where
        read_file's ``split("\n")`` would count one more, empty, line); a ``\r`` before
        a newline is dropped. Works before indexing is done. Lines longer than
        ``max_line_chars`` come back cut, with ``truncated`` set; skipping past them
        scans for their newline in bounded chunks (and remembers where it was).
        """
        if offset_line < 0 or limit < 0 or max_line_chars < 1:
            raise ValueError("offset_line and limit must be >= 0, max_line_chars >= 1")
        position = self.byte_of_line(offset_line) if limit else None
        if position is None:
            return []
        window = 4 * max_line_chars + 4
        block, block_start = b"", position
        lines: list[Line] = []
        while len(lines) < limit and position < self._size:
            start = position - block_start
            newline = block.find(b"\n", start, start + window)
            if newline >= 0:
                raw, after, complete = block[start:newline], block_start + newline + 1, True
            elif block_start + len(block) >= self._size and len(block) - start <= window:
                raw, after, complete = block[start:], self._size, True
            elif len(block) - start >= window:
                raw, complete = block[start : start + window], False
                if len(lines) + 1 == limit:  # nothing follows on this page: skip the scan
                    lines.append(self._make_line(len(lines) + offset_line, position, raw, complete, max_line_chars))
                    return lines
                after = self._end_of_line(position + window)
            else:
                block, block_start = self._read(position, max(READ_BLOCK, window + 1)), position
                continue
            lines.append(self._make_line(len(lines) + offset_line, position, raw, complete, max_line_chars))
            position = after
        if position < self._size:
            self._anchor = (offset_line + len(lines), position)
        return lines

    def char_window(self, line_no: int, start_char: int, length: int) -> str:
        """Up to ``length`` chars of line ``line_no`` from ``start_char``; short at the line end."""
        if start_char < 0 or length < 0:
            raise ValueError("start_char and length must be >= 0")
        line_start = self.byte_of_line(line_no)
        if line_start is None or length == 0:
            return ""
        position = self._byte_of_char(line_start, start_char)
        raw = self._read(position, 4 * length + 4)
        newline = raw.find(b"\n")
        if newline >= 0:
            raw = raw[:newline].removesuffix(b"\r")
            return raw.decode("utf-8", "replace")[:length]
        return _decoder().decode(raw, final=position + len(raw) >= self._size)[:length]

    def hex_page(self, offset_bytes: int, length: int) -> list[str]:
        """Hexdump rows (offset, 16 bytes in hex, printable ASCII) for binary files."""
        data = self._read(max(0, offset_bytes), max(0, length))
        rows = []
        for row_start in range(0, len(data), HEX_ROW_BYTES):
            chunk = data[row_start : row_start + HEX_ROW_BYTES]
            hex_part = " ".join(f"{byte:02x}" for byte in chunk)
            if len(chunk) > 8:
                hex_part = hex_part[:23] + " " + hex_part[23:]
            text = "".join(chr(byte) if 0x20 <= byte < 0x7F else "." for byte in chunk)
            rows.append(f"{offset_bytes + row_start:08x}  {hex_part:<48}  |{text}|")
        return rows

    # -- search ------------------------------------------------------------------

    def search(
        self,
        pattern: str,
        *,
        regex: bool = False,
        start: tuple[int, int] | None = None,
        backwards: bool = False,
        ignore_case: bool = False,
    ) -> Match | None:
        """The first match at or after ``start``, or with ``backwards`` the last one before it.

        ``start`` defaults to the start of the file (or its end, backwards). Plain
        case-sensitive text is searched as UTF-8 bytes, the fastest path; regexes and
        ``ignore_case`` search decoded windows of 4 MiB with ``re.MULTILINE``, so ``^``
        and ``$`` mean line starts and ends. Memory stays at a few windows whatever the
        line lengths; the price is that a regex match spanning two windows is found only
        when it is at most ``REGEX_OVERLAP`` bytes long, and lookbehinds see one char
        before a window.
        """
        if not pattern:
            raise ValueError("empty search pattern")
        resolved = self._resolve_start(start, backwards)
        if resolved is None:
            return None
        origin, hint = resolved
        if regex or ignore_case:
            flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
            compiled = re.compile(pattern if regex else re.escape(pattern), flags)
            find = self._regex_backward if backwards else self._regex_forward
            found = find(compiled, origin)
        else:
            needle = pattern.encode("utf-8")
            find = self._bytes_backward if backwards else self._bytes_forward
            at = find(needle, origin)
            found = None if at is None else (at, len(pattern))
        if found is None:
            return None
        at, length = found
        line, line_start = self._locate(at, None if backwards else hint)
        return Match(line, self._chars_before(line_start, at), length)

    def _resolve_start(
        self, start: tuple[int, int] | None, backwards: bool
    ) -> tuple[int, tuple[int, int, int] | None] | None:
        """The search origin in bytes, with ``(line, line start, origin)`` when known."""
        if start is None:
            return (self._size, None) if backwards else (0, (0, 0, 0))
        line_start = self.byte_of_line(start[0])
        if line_start is None:
            return (self._size, None) if backwards else None
        origin = self._byte_of_char(line_start, start[1])
        return origin, (start[0], line_start, origin)

    def _bytes_forward(self, needle: bytes, origin: int) -> int | None:
        position = origin
        while position < self._size:
            block = self._read(position, SEARCH_BLOCK)
            at = block.find(needle)
            if at >= 0:
                return position + at
            if position + len(block) >= self._size:
                return None
            position += len(block) - len(needle) + 1
        return None

    def _bytes_backward(self, needle: bytes, origin: int) -> int | None:
        end = origin
        while end > 0:
            begin = max(0, end - SEARCH_BLOCK)
            block = self._read(begin, end - begin + len(needle) - 1)
            at = block.rfind(needle)
            if at >= 0:
                return begin + at
            end = begin
        return None

    def _regex_forward(self, compiled: re.Pattern[str], origin: int) -> tuple[int, int] | None:
        position = origin
        while True:
            context = 1 if position > 0 else 0
            raw = self._read(position - context, SEARCH_BLOCK + context)
            at_end = position - context + len(raw) >= self._size
            if not at_end:
                raw = raw[: _complete_prefix_length(raw)]
                cut = _char_start_at_or_after(raw, max(context + 1, len(raw) - REGEX_OVERLAP))
            else:
                cut = len(raw)
            head = raw[:cut].decode("utf-8", "replace")
            text = head + raw[cut:].decode("utf-8", "replace")
            match = compiled.search(text, context)
            if match is not None and match.start() < len(head):
                return position - context + _offset_of_char(raw, match.start()), len(match.group())
            if at_end:
                return None
            position += cut - context

    def _regex_backward(self, compiled: re.Pattern[str], origin: int) -> tuple[int, int] | None:
        end = origin
        while end > 0:
            begin = max(0, end - SEARCH_BLOCK)
            if begin > 0:
                head_start = self._read(begin, 4)
                begin = min(end, begin + _char_start_at_or_after(head_start, 0))
            context = 1 if begin > 0 else 0
            raw = self._read(begin - context, end - begin + context + REGEX_OVERLAP)
            if begin - context + len(raw) < self._size:
                raw = raw[: _complete_prefix_length(raw)]
            cut = context + end - begin
            head = raw[:cut].decode("utf-8", "replace")
            text = head + raw[cut:].decode("utf-8", "replace")
            last = None
            for match in compiled.finditer(text, context):
                if match.start() >= len(head):
                    break
                last = match
            if last is not None:
                return begin - context + _offset_of_char(raw, last.start()), len(last.group())
            end = begin
        return None

    # -- byte, line and char geometry ----------------------------------------------

    def _read(self, offset: int, length: int, *, limit: int | None = None) -> bytes:
        """Read within the size last seen, so a page never mixes old and new content."""
        length = min(length, (self._size if limit is None else limit) - offset)
        return os.pread(self._fd, length, offset) if length > 0 else b""

    def _locate(self, offset: int, hint: tuple[int, int, int] | None = None) -> tuple[int, int]:
        """``(line number, line start)`` of the line holding byte ``offset``.

        Walks forward from the nearest index checkpoint, or from ``hint`` (a position
        already resolved, at or before ``offset``) when that is closer, which keeps
        repeated searches inside one giant line from rescanning it from its start.
        """
        base_line, base_offset = self._index.checkpoint_for_offset(offset)
        line_start = base_offset
        anchor_line, anchor_offset = self._anchor
        if base_offset < anchor_offset <= offset:
            base_line, base_offset, line_start = anchor_line, anchor_offset, anchor_offset
        if hint is not None and base_offset < hint[2] <= offset:
            base_line, line_start, base_offset = hint
        seen, last_line_start, _ = scan_lines(self._fd, base_offset, offset)
        return base_line + seen, (last_line_start if seen else line_start)

    def _end_of_line(self, offset: int) -> int:
        """Offset just past the newline at or after ``offset`` (or the file size)."""
        known = self._long_line_ends.get(offset)
        if known is not None:
            return known
        position = offset
        while position < self._size:
            block = self._read(position, CHAR_BLOCK)
            newline = block.find(b"\n")
            if newline >= 0:
                position += newline + 1
                break
            position += len(block)
        position = min(position, self._size)
        self._long_line_ends[offset] = position
        if len(self._long_line_ends) > 64:
            self._long_line_ends.popitem(last=False)
        return position

    def _make_line(self, number: int, offset: int, raw: bytes, complete: bool, max_chars: int) -> Line:
        if complete:
            text = raw.removesuffix(b"\r").decode("utf-8", "replace")
            truncated = len(text) > max_chars
        else:
            text = _decoder().decode(raw)
            truncated = True
        return Line(number, text[:max_chars], offset, truncated)

    def _byte_of_char(self, line_start: int, char: int) -> int:
        """Byte offset of char ``char`` of the line at ``line_start`` (its end if shorter)."""
        chars, position = self._marks.nearest(line_start, char=char)
        decoder = _decoder()
        while True:
            block = self._read(position, CHAR_BLOCK)
            newline = block.find(b"\n")
            at_end = newline >= 0 or len(block) < CHAR_BLOCK
            if newline >= 0:
                block = block[:newline].removesuffix(b"\r")
            state = decoder.getstate()
            if not state[0] and block.isascii():
                count = len(block)
            else:
                count = len(decoder.decode(block, final=at_end))
            if chars + count > char:
                return position + _offset_of_char(block, char - chars, state)
            chars += count
            position += len(block)
            if at_end:
                return position
            self._marks.add(line_start, chars, position - len(decoder.getstate()[0]))

    def _chars_before(self, line_start: int, offset: int) -> int:
        """How many chars of the line at ``line_start`` come before byte ``offset``."""
        chars, position = self._marks.nearest(line_start, byte=offset)
        decoder = _decoder()
        while position < offset:
            block = self._read(position, min(CHAR_BLOCK, offset - position))
            if not block:
                break
            if not decoder.getstate()[0] and block.isascii():
                chars += len(block)
            else:
                chars += len(decoder.decode(block))
            position += len(block)
            if len(block) == CHAR_BLOCK:
                self._marks.add(line_start, chars, position - len(decoder.getstate()[0]))
        return chars + (1 if decoder.getstate()[0] else 0)
