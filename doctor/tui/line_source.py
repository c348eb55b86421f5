"""Lines of a spill file on demand, over the sparse `LineIndex`, for the pager view.

Textual-free on purpose: the view asks for a block of lines on a worker thread and
renders what came back. A line is read from the nearest index checkpoint, and only its
first `MAX_LINE_CHARS` characters are decoded, so one giant line costs a bounded read
to show (finding the *next* line still has to count past it: that happens on the
worker, never on the UI thread). Binary files are shown as hex rows of 16 bytes.

`doctor/spill/pager.py` (issue 4) is the engine this should delegate to once it lands;
the methods here are the subset the view uses.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass

from doctor.spill.line_index import LineIndex, scan_lines

MAX_LINE_CHARS = 4_000
HEX_WIDTH = 16
_SNIFF_BYTES = 8192
_SEARCH_CHUNK = 1 << 20
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """Escape sequences dropped, other controls as visible `\\xNN`; tabs become spaces."""
    text = _ESCAPES.sub("", text).replace("\t", "    ")
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    text: str
    more_bytes: int  # bytes of this line not shown (0 when all of it is)


class LineSource:
    """One open spill file: line count as the index grows, line blocks, search, growth."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self._fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        info = os.fstat(self._fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(self._fd)
            raise OSError(f"{self.path} is not a regular file")
        self.inode = info.st_ino
        self.size = info.st_size
        head = os.pread(self._fd, _SNIFF_BYTES, 0)
        self.binary = b"\x00" in head
        self._lock = threading.Lock()
        self._offsets: OrderedDict[int, int] = OrderedDict()  # line -> start offset, recently used
        self.index = LineIndex(self._fd, self.size)
        if not self.binary:
            self.index.start()

    def close(self) -> None:
        self.index.cancel()
        try:
            os.close(self._fd)
        except OSError:
            pass

    # -- size ----------------------------------------------------------------------

    @property
    def indexing(self) -> bool:
        return not self.binary and not self.index.progress.done

    @property
    def index_fraction(self) -> float:
        return 1.0 if self.binary else self.index.progress.fraction

    @property
    def known_lines(self) -> int:
        """Lines known so far (all of them once indexed)."""
        if self.binary:
            return (self.size + HEX_WIDTH - 1) // HEX_WIDTH
        count = self.index.line_count
        if count is not None:
            return count
        return self.index.progress.lines_seen + 1

    def grow(self) -> str:
        """Check the file on disk: 'same', 'grown', or 'replaced' (truncated or rotated)."""
        try:
            on_disk = os.stat(self.path)
            info = os.fstat(self._fd)
        except OSError:
            return "replaced"
        if on_disk.st_ino != self.inode or info.st_size < self.size:
            return "replaced"
        if info.st_size > self.size:
            self.size = info.st_size
            if not self.binary:
                self.index.extend(info.st_size)
            return "grown"
        return "same"

    # -- reading -------------------------------------------------------------------

    def lines(self, first: int, count: int) -> list[Line]:
        """Up to `count` lines from `first` (fewer at the end of the file). Worker thread only."""
        if self.binary:
            return self._hex_lines(first, count)
        offset = self._offset_of(first)
        if offset is None:
            return []
        out = []
        number = first
        size = self.size
        while len(out) < count and offset < size:
            line, next_offset = self._read_line(offset, size)
            out.append(Line(number, *line))
            number += 1
            offset = next_offset
            self._remember(number, offset)
        return out

    def _remember(self, line: int, offset: int) -> None:
        with self._lock:
            self._offsets[line] = offset
            self._offsets.move_to_end(line)
            while len(self._offsets) > 4096:
                self._offsets.popitem(last=False)

    def _offset_of(self, line: int) -> int | None:
        with self._lock:
            known = self._offsets.get(line)
            if known is None:
                # the nearest remembered line below, if closer than the checkpoint
                best = max((n for n in self._offsets if n <= line), default=None)
        if known is not None:
            return known
        base_line, base_offset = self.index.checkpoint_for_line(line)
        if best is not None and best > base_line:
            base_line, base_offset = best, self._offsets.get(best, base_offset)
        if base_line == line:
            return base_offset
        skipped, offset, _ = scan_lines(self._fd, base_offset, self.size, line - base_line)
        if skipped < line - base_line:
            return None
        self._remember(line, offset)
        return offset

    def _read_line(self, start: int, size: int) -> tuple[tuple[str, int], int]:
        cap = MAX_LINE_CHARS * 4
        head = os.pread(self._fd, min(cap, size - start), start)
        end = head.find(b"\n")
        if end >= 0:
            return (inert(head[:end].decode("utf-8", "replace").rstrip("\r")), 0), start + end + 1
        if start + len(head) >= size:
            return (inert(head.decode("utf-8", "replace")), 0), size
        _, after, _ = scan_lines(self._fd, start + len(head), size, 1)
        next_start = after if after > start + len(head) else size
        text = head.decode("utf-8", "ignore")[:MAX_LINE_CHARS]
        shown = len(text.encode("utf-8"))
        return (inert(text), next_start - start - shown), next_start

    def _hex_lines(self, first: int, count: int) -> list[Line]:
        data = os.pread(self._fd, count * HEX_WIDTH, first * HEX_WIDTH)
        out = []
        for row in range(0, len(data), HEX_WIDTH):
            chunk = data[row : row + HEX_WIDTH]
            hex_part = " ".join(f"{b:02x}" for b in chunk).ljust(HEX_WIDTH * 3 - 1)
            text_part = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
            out.append(Line(first + row // HEX_WIDTH, f"{(first * HEX_WIDTH + row):08x}  {hex_part}  {text_part}", 0))
        return out

    # -- search --------------------------------------------------------------------

    def search(self, pattern: re.Pattern[bytes], from_line: int, *, backwards: bool = False,
               cancelled=lambda: False) -> int | None:
        """The number of the next (or previous) line after `from_line` that matches, streaming.

        Reads 1 MiB chunks cut at line ends; a match inside a line longer than a chunk
        may be missed at a chunk edge (the chunks overlap by 4 KiB to make it rare).
        """
        if self.binary:
            return None
        start = self._offset_of(from_line)
        if start is None:
            return None
        if backwards:
            return self._search_back(pattern, from_line, start, cancelled)
        _, position, _ = scan_lines(self._fd, start, self.size, 1)  # start of the next line
        line = from_line + 1
        size = self.size
        while position < size and not cancelled():
            chunk = os.pread(self._fd, min(_SEARCH_CHUNK, size - position), position)
            cut = chunk.rfind(b"\n") + 1 if position + len(chunk) < size else len(chunk)
            if cut <= 0:
                cut = max(1, len(chunk) - 4096)
            match = pattern.search(chunk, 0, cut if cut == len(chunk) else cut)
            if match is None and cut < len(chunk) and chunk.rfind(b"\n") < 0:
                match = pattern.search(chunk)
            if match is not None:
                return line + chunk.count(b"\n", 0, match.start())
            line += chunk.count(b"\n", 0, cut)
            position += cut
        return None

    def _search_back(self, pattern, from_line: int, end: int, cancelled) -> int | None:
        line = from_line
        position = end  # search strictly before the start of from_line
        while position > 0 and not cancelled():
            begin = max(0, position - _SEARCH_CHUNK)
            chunk = os.pread(self._fd, position - begin, begin)
            cut = chunk.find(b"\n") + 1 if begin > 0 else 0
            if begin > 0 and cut <= 0:
                cut = 0
            last = None
            for match in pattern.finditer(chunk, cut):
                last = match
            if last is not None:
                return line - chunk.count(b"\n", last.start(), len(chunk))
            line -= chunk.count(b"\n", cut, len(chunk))
            position = begin + cut if begin > 0 else 0
            if begin == 0:
                break
        return None


def compile_search(text: str, *, regex: bool = False, ignore_case: bool = True) -> re.Pattern[bytes]:
    """A bytes pattern for `LineSource.search` (raises re.error for a bad regex)."""
    source = text.encode("utf-8") if regex else re.escape(text.encode("utf-8"))
    return re.compile(source, re.IGNORECASE if ignore_case else 0)
