"""Read JSON Lines recordings the way agents' own loaders do, and say what was skipped.

Every reader of a `.jsonl` session goes through `iter_json_lines`: it streams
the file (one line in memory at a time), tolerates a torn last line (the agent
may still be writing), skips invalid lines with their line numbers, decodes
invalid UTF-8 with U+FFFD as Node's `readFile(…, "utf8")` does, and accepts lone
surrogate escapes that orjson refuses but `JSON.parse` keeps. It never writes
to or locks the file; `iter_mapped_lines` maps it read-only.

A line longer than LINE_CAP (a crash's run of NUL bytes, gigabytes of one string) is never
held: the iterators find its end window by window, dropping the pages behind them, and hand
it over with no buffer (`buffer is None`, its length `end - begin`); readers report it with
`over_cap_issue` and go on. Memory stays bounded whatever a file holds.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import orjson

from doctor.sources.base import SourceIssue, open_session_file

READ_CHUNK = 1 << 20
# `iter_mapped_lines` drops the pages it has passed from the process this often.
DROP_EVERY = 1 << 23
# The longest line (or single-document file) a reader decodes, in bytes. A longer one is measured
# (its length is found without holding it) and reported as an input issue naming the file and
# line; nothing of it is decoded. Why this size: docs/security.md, "Giant lines".
LINE_CAP = 256 << 20
# A newline is looked for this far at a time; past it, the pages the search passed are dropped. Only a
# line longer than this is checked against LINE_CAP by the map readers: the window must stay below the cap.
SEARCH_WINDOW = 1 << 23


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One parsed line: its 1-based number, byte offset and value."""

    number: int
    offset: int
    value: object


@dataclass(slots=True)
class Cursor:
    """Where a resumable read of a file stands: the byte offset after the last line read, and the
    number of lines read, so a later read goes on from there with the same line numbers."""

    offset: int = 0
    lines: int = 0


# What bytes.strip() strips, and the bytes a value can open with (the stdlib also reads NaN and Infinity).
_SPACE = frozenset(b" \t\n\r\x0b\x0c")
_LEADING_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]*")
_VALUE_OPENINGS = frozenset(b'{["-0123456789tfnNI')
_VALUE_ENDINGS = frozenset(b'}]"0123456789elNy')  # ...true, false, null; NaN, Infinity


class NestedTooDeep(ValueError):
    """A JSON value nested deeper than Python's decoders go (the stdlib recurses once per level).

    A ValueError, so every caller that skips undecodable JSON skips this too, instead of dying
    with a RecursionError on a line like `[[[[…]]]]` 100,000 levels deep.
    """

    def __init__(self) -> None:
        super().__init__("JSON nested too deeply to decode")


def loads(data: bytes | str) -> object:
    """JSON.parse semantics as far as values go: orjson first, stdlib for its refusals (not for text
    no JSON value can start, whose error is raised without decoding it all: junk may be huge)."""
    if isinstance(data, bytes) and len(data) > READ_CHUNK:  # a document: its last byte may say it is junk
        _, last = content_span(data, 0, len(data))
        if last and data[last - 1] < 0x80 and data[last - 1] not in _VALUE_ENDINGS:
            raise ValueError(f"it ends with byte 0x{data[last - 1]:02x} at {last - 1:,}, where no JSON value ends")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if isinstance(data, bytes):
            first, _ = content_span(data, 0, len(data))
            if first < len(data) and not opens_value(data[first]):
                raise json.JSONDecodeError("Expecting value", data[: first + 1].decode("ascii"), first) from None
            data = data.decode("utf-8", "replace")
        return stdlib_loads(data)


def content_span(buffer, begin: int, end: int) -> tuple[int, int]:
    """The span of `buffer[begin:end]` that `bytes.strip()` would leave, found without copying it."""
    first = _LEADING_SPACE.match(buffer, begin, end).end()
    last = end
    while last > first and buffer[last - 1] in _SPACE:
        last -= 1
    return first, last


def opens_value(byte: int) -> bool:
    """Whether a JSON decoder could read a value from text whose first non-blank byte is `byte` (non-ASCII
    bytes count as maybe: a BOM and UTF-8 have their own errors)."""
    return byte >= 0x80 or byte in _VALUE_OPENINGS


def stdlib_loads(text: str) -> object:
    """`json.loads`, with too-deep nesting raised as NestedTooDeep (a ValueError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestedTooDeep() from None


def iter_line_spans(path: Path, *, start: int = 0) -> Iterator[tuple[int, bytes | None, memoryview | None, int, int, bool]]:
    """The lines of a file read in chunks, uncopied: (byte offset, buffer, its memoryview, begin, end,
    ended-with-newline), the line being `buffer[begin:end]`; for a line longer than LINE_CAP,
    buffer and view are None and `end - begin` is its length. No UTF-8 check (callers validate).

    For hot loops that decode each line once and drop it: a line inside one read
    chunk is a span of that chunk, a line spanning chunks is joined into its own
    buffer (up to LINE_CAP: past it the pieces are dropped, only counted). Every line
    is given, a last unterminated one too, as `iter_mapped_lines` gives them.
    """
    with open_session_file(path) as handle:
        handle.seek(start)
        offset = start
        pending: list[bytes] = []
        held = 0  # bytes of the line so far; past LINE_CAP `pending` is dropped
        read = handle.read
        while True:
            chunk = read(READ_CHUNK)
            if not chunk:
                break
            view = memoryview(chunk)
            find = chunk.find
            begin = 0
            while True:
                end = find(b"\n", begin)
                if end < 0:
                    held += len(chunk) - begin
                    if held > LINE_CAP:
                        pending.clear()
                    elif begin < len(chunk):
                        pending.append(chunk[begin:])
                    break
                if held:
                    length = held + end - begin
                    if length > LINE_CAP:
                        pending.clear()
                        yield offset, None, None, 0, length, True
                    else:
                        pending.append(chunk[begin:end])
                        line = b"".join(pending)
                        pending.clear()
                        yield offset, line, memoryview(line), 0, length, True
                    offset += length + 1
                    held = 0
                elif end - begin > LINE_CAP:
                    yield offset, None, None, begin, end, True
                    offset += end - begin + 1
                else:
                    yield offset, chunk, view, begin, end, True
                    offset += end - begin + 1
                begin = end + 1
        if held > LINE_CAP:
            yield offset, None, None, 0, held, False
        elif held:
            line = b"".join(pending)
            yield offset, line, memoryview(line), 0, len(line), False


def line_end(mapped: mmap.mmap, begin: int, searched: int = 0) -> int:
    """Where the line starting at `begin` of a read-only map ends: its newline, or -1 when it runs to the
    end of the map. `searched`: bytes from `begin` already known to hold no newline. The search goes a
    window at a time and drops the pages behind it, so even gigabytes of one line cost a window."""
    size = len(mapped)
    at = begin + searched
    dropped = begin - begin % mmap.PAGESIZE
    while at < size:
        stop = min(at + SEARCH_WINDOW, size)
        end = mapped.find(b"\n", at, stop)
        if end >= 0:
            return end
        at = stop
        if at - dropped >= SEARCH_WINDOW:
            dropped = drop_pages_behind(mapped, dropped, at)
    return -1


def iter_mapped_lines(path: Path, *, start: int = 0) -> Iterator[tuple[int, object, memoryview, int, int, bool]]:
    """`iter_line_spans` without copying: (byte offset, buffer, its memoryview, begin, end,
    ended-with-newline) where the buffer is a read-only map of the whole file, so a line
    is `buffer[begin:end]` and its offset is `begin`; None and None for a line longer than
    LINE_CAP (never read: its pages are dropped as its end is found). No UTF-8 check.

    On ~90 KB lines a file iterator's copies cost more than parsing them. Every
    DROP_EVERY bytes the pages already passed are dropped from the process
    (MADV_DONTNEED: they stay in the page cache), so its RSS stays flat whatever the
    file's size. A file that cannot be mapped (a pipe) is read in chunks instead.
    """
    with read_only_map(path) as mapping:
        if mapping is None:
            yield from iter_line_spans(path, start=start)
            return
        mapped, view = mapping
        find, size = mapped.find, len(mapped)
        dropped = start - start % mmap.PAGESIZE
        begin = start
        while begin < size:
            end = find(b"\n", begin, begin + SEARCH_WINDOW)
            if end < 0 and begin + SEARCH_WINDOW < size:
                end = line_end(mapped, begin, SEARCH_WINDOW)
            terminated = end >= 0
            if not terminated:
                end = size
            if end - begin > LINE_CAP:
                yield begin, None, None, begin, end, terminated
            else:
                yield begin, mapped, view, begin, end, terminated
            if not terminated:
                break
            begin = end + 1
            if begin - dropped >= DROP_EVERY:
                dropped = drop_pages_behind(mapped, dropped, begin)


@contextlib.contextmanager
def read_only_map(path: Path) -> Iterator[tuple[mmap.mmap, memoryview] | None]:
    """A read-only map of the whole file and a memoryview of it, released after; None when the
    file cannot be mapped (a pipe, an empty file)."""
    with open_session_file(path) as handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # empty, or not a regular file
            mapped = None
    if mapped is None:
        yield None
        return
    view = memoryview(mapped)
    try:
        yield mapped, view
    finally:
        try:
            view.release()
            mapped.close()
        except BufferError:  # a caller still holds a slice; the map goes when it does
            pass


def iter_line_chunks(mapped: mmap.mmap, start: int, chunk_bytes: int) -> Iterator[tuple[int, int, bool]]:
    """(begin, stop, readable) of the lines of a `read_only_map` from `start`, about `chunk_bytes` of
    them at a time, for readers that hand a chunk of lines to one decode call: each chunk ends just
    past a newline (the last at the end of the file, maybe without one), a long line is whole. A
    line longer than LINE_CAP comes alone with `readable` False: not read, its pages dropped as its
    end was found. Passed pages are dropped as `iter_mapped_lines` drops them."""
    size = len(mapped)
    dropped = start - start % mmap.PAGESIZE
    begin = start
    while begin < size:
        target = min(begin + chunk_bytes, size) - 1
        newline = mapped.find(b"\n", target, target + SEARCH_WINDOW)
        if newline < 0 and target + SEARCH_WINDOW < size:  # a long line runs past the chunk
            opening = mapped.rfind(b"\n", begin, target) + 1  # where it starts (0: at `begin`)
            if opening > begin:
                yield begin, opening, True  # the whole lines before it
                begin = opening
            newline = line_end(mapped, begin, target + SEARCH_WINDOW - begin)
            stop = size if newline < 0 else newline + 1
            yield begin, stop, (newline if newline >= 0 else size) - begin <= LINE_CAP
        else:
            stop = size if newline < 0 else newline + 1
            yield begin, stop, True
        begin = stop
        if begin - dropped >= DROP_EVERY:
            dropped = drop_pages_behind(mapped, dropped, begin)


def drop_pages_behind(mapped: mmap.mmap, dropped: int, offset: int) -> int:
    """Drop the map's pages from `dropped` up to the page holding `offset` from the process (they
    stay in the page cache); the new `dropped`."""
    if not hasattr(mapped, "madvise"):
        return dropped
    upto = offset - offset % mmap.PAGESIZE
    mapped.madvise(mmap.MADV_DONTNEED, dropped, upto - dropped)
    return upto


def iter_raw_lines(path: Path, *, start: int = 0) -> Iterator[tuple[int, int, bytes, bool]]:
    """(line number, byte offset, bytes without newline, ended-with-newline) from `start`.

    Lines are read in chunks so a file of any size streams; one very long line is
    held whole (it has to be, to parse it).
    """
    handle = open_session_file(path)
    with handle:
        handle.seek(start)
        number = 0
        offset = start
        pending: list[bytes] = []
        while True:
            chunk = handle.read(READ_CHUNK)
            if not chunk:
                break
            begin = 0
            while True:
                end = chunk.find(b"\n", begin)
                if end < 0:
                    pending.append(chunk[begin:])
                    break
                piece = chunk[begin:end]
                if pending:
                    pending.append(piece)
                    piece = b"".join(pending)
                    pending.clear()
                number += 1
                yield number, offset, piece, True
                offset += len(piece) + 1
                begin = end + 1
        if pending:
            piece = b"".join(pending)
            number += 1
            yield number, offset, piece, False


def iter_json_lines(path: Path, issues: list[SourceIssue], *, start: int = 0) -> Iterator[JsonLine]:
    """Parsed values of each non-blank line; problems go to `issues`. (Qwen's reader salvages glued records
    its own way: doctor.sources.qwen.records.)"""
    number = 0
    for offset, buffer, view, begin, end, terminated in iter_mapped_lines(path, start=start):
        number += 1
        for value in line_values(path, number, buffer, view, begin, end, terminated, issues):
            yield JsonLine(number, offset, value)


def line_values(
    path: Path, number: int, buffer, view: memoryview, begin: int, end: int, terminated: bool,
    issues: list[SourceIssue],
) -> list:
    """The values `iter_json_lines` takes from line `number` (`buffer[begin:end]`): one, or none (a
    blank or bad line, with its issue; a line over LINE_CAP, given with no buffer). The exact path of
    every reader."""
    if buffer is None:
        issues.append(over_cap_issue(path, number, end - begin))
        return []
    if begin < end and buffer[begin] != 0x7B:  # not "{": maybe blank, or junk no value opens
        first, last = content_span(buffer, begin, end)
        if first == last:
            return []
        if not opens_value(buffer[first]):  # a crash's NUL bytes: never copied (orjson would copy the line)
            issues.append(_bad_line_issue(path, number, terminated, last - first))
            return []
    try:
        # orjson skips JSON whitespace itself and accepts valid UTF-8 only, so a line it parses
        # needs neither stripping nor another check.
        return [orjson.loads(view[begin:end])]
    except orjson.JSONDecodeError:
        pass
    first, last = content_span(buffer, begin, end)
    if first == last:
        return []
    stripped = buffer[first:last]
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        try:
            value = stdlib_loads(stripped.decode("utf-8", "replace"))
        except ValueError as exc:
            issues.append(_bad_line_issue(path, number, terminated, len(stripped), exc))
            return []
        if not is_valid_utf8(stripped):
            issues.append(SourceIssue(path, number, "invalid UTF-8 bytes shown as U+FFFD", "note"))
    return [value]


def read_document(path: Path) -> bytes | None:
    """A whole file to decode as one JSON document, or None when it is longer than LINE_CAP (its
    length is `os.stat(path).st_size`: the caller says so). Raises SourceError when it cannot be read."""
    with open_session_file(path) as handle:
        if os.fstat(handle.fileno()).st_size > LINE_CAP:
            return None
        data = handle.read(LINE_CAP + 1)  # a file that grew meanwhile is cut here, and then fails to decode
    return data if len(data) <= LINE_CAP else None


def over_cap_message(size: int) -> str:
    return f"one JSON document of {size:,} bytes is longer than doctor decodes ({LINE_CAP:,} bytes): not read"


def over_cap_issue(path: Path, number: int, length: int) -> SourceIssue:
    """A line longer than LINE_CAP: measured (its length), not decoded, its records left out."""
    return SourceIssue(path, number, f"line of {length:,} bytes is longer than doctor decodes ({LINE_CAP:,} bytes): "
                       "measured, not read; its records are left out", "warning")


def is_valid_utf8(raw: bytes) -> bool:
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _bad_line_issue(path: Path, number: int, terminated: bool, size: int, error: ValueError | None = None) -> SourceIssue:
    if isinstance(error, NestedTooDeep):
        return SourceIssue(path, number, f"invalid JSON line ({size:,} bytes) skipped: nested too deeply to decode", "warning")
    if not terminated:
        return SourceIssue(path, number, "incomplete last record (the file may still be being written); ignored", "note")
    return SourceIssue(path, number, f"invalid JSON line ({size:,} bytes) skipped", "warning")


class ContentIdentity(NamedTuple):
    """What tells a file's content from another's without reading it: which file, its size, its times."""

    device: int
    inode: int
    size: int
    modified_ns: int
    changed_ns: int


def content_identity(path: Path) -> ContentIdentity | None:
    """The file's identity now; None when it cannot be stat-ed."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return ContentIdentity(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


# The line count of the last file whose lines a pass counted on its way (the spill audit's marker
# scan), so that `count_records` right after it (the scan's job, `doctor memory --results`) does
# not read the file once more. One file: a worker does one file's job at a time.
_counted: tuple[ContentIdentity, int] | None = None


def remember_record_count(identity: ContentIdentity, lines: int) -> None:
    """Note `count_records`' figure for the file whose content is `identity`, read and counted whole."""
    global _counted
    _counted = (identity, lines)


def remembered_record_count(path: Path) -> int | None:
    """The count remembered for the file as it is now, or None."""
    counted = _counted
    return counted[1] if counted is not None and counted[0] == content_identity(path) else None


_FIND_FIRST = 256  # newlines a chunk is searched for one by one before it is counted whole


def count_newlines(chunk: bytes) -> int:
    """`chunk.count(b"\\n")`, faster on session files: their lines run to kilobytes, and finding each newline
    (memchr, vectorised) skips over a line many times faster than `bytes.count` walks it byte by byte. A chunk
    of short lines is counted whole after the first _FIND_FIRST, so it costs what `count` costs."""
    find = chunk.find
    position = found = 0
    while found < _FIND_FIRST:
        position = find(b"\n", position)
        if position < 0:
            return found
        found += 1
        position += 1
    return found + chunk.count(b"\n", position)


def count_records(path: Path) -> int:
    """JSON lines in a `.jsonl` file (non-blank lines are counted by their newlines); a JSON document is one record.

    A count a pass over the same content remembered (`remember_record_count`) is taken as it is."""
    path = Path(path)
    if path.suffix != ".jsonl":
        return 1
    remembered = remembered_record_count(path)
    if remembered is not None:
        return remembered
    lines = 0
    last = b"\n"
    with open_session_file(path) as handle:
        while chunk := handle.read(READ_CHUNK):
            lines += count_newlines(chunk)
            last = chunk[-1:]
    return lines + (last != b"\n")
