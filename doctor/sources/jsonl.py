"""Read JSON Lines recordings the way agents' own loaders do, and say what was skipped.

Every reader of a `.jsonl` session goes through `iter_json_lines`: it streams
the file (one line in memory at a time), tolerates a torn last line (the agent
may still be writing), skips invalid lines with their line numbers, decodes
invalid UTF-8 with U+FFFD as Node's `readFile(…, "utf8")` does, and accepts lone
surrogate escapes that orjson refuses but `JSON.parse` keeps. It never writes
to or locks the file; `iter_mapped_lines` maps it read-only.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import orjson

from doctor.sources.base import SourceIssue, open_session_file

READ_CHUNK = 1 << 20
# `iter_mapped_lines` drops the pages it has passed from the process this often.
DROP_EVERY = 1 << 23


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


class NestedTooDeep(ValueError):
    """A JSON value nested deeper than Python's decoders go (the stdlib recurses once per level).

    A ValueError, so every caller that skips undecodable JSON skips this too, instead of dying
    with a RecursionError on a line like `[[[[…]]]]` 100,000 levels deep.
    """

    def __init__(self) -> None:
        super().__init__("JSON nested too deeply to decode")


def loads(data: bytes | str) -> object:
    """JSON.parse semantics as far as values go: orjson first, stdlib for its refusals."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        return stdlib_loads(text)


def stdlib_loads(text: str) -> object:
    """`json.loads`, with too-deep nesting raised as NestedTooDeep (a ValueError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestedTooDeep() from None


def iter_line_spans(path: Path, *, start: int = 0) -> Iterator[tuple[int, bytes, memoryview, int, int, bool]]:
    """The lines of `iter_raw_lines`, uncopied: (byte offset, buffer, its memoryview, begin, end,
    ended-with-newline), the line being `buffer[begin:end]`. No UTF-8 check (callers validate).

    For hot loops that decode each line once and drop it: a line inside one read
    chunk is a span of that chunk, a line spanning chunks is joined into its own
    buffer. The same lines as `iter_raw_lines`, including its last, possibly empty,
    unterminated one.
    """
    with open_session_file(path) as handle:
        handle.seek(start)
        offset = start
        pending: list[bytes] = []
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
                    pending.append(chunk[begin:])
                    break
                if pending:
                    pending.append(chunk[begin:end])
                    line = b"".join(pending)
                    pending.clear()
                    yield offset, line, memoryview(line), 0, len(line), True
                    offset += len(line) + 1
                else:
                    yield offset, chunk, view, begin, end, True
                    offset += end - begin + 1
                begin = end + 1
        if pending:
            line = b"".join(pending)
            yield offset, line, memoryview(line), 0, len(line), False


def iter_mapped_lines(path: Path, *, start: int = 0) -> Iterator[tuple[int, object, memoryview, int, int, bool]]:
    """`iter_line_spans` without copying: (byte offset, buffer, its memoryview, begin, end,
    ended-with-newline) where the buffer is a read-only map of the whole file, so a line
    is `buffer[begin:end]` and its offset is `begin`. No UTF-8 check (callers validate).

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
            end = find(b"\n", begin)
            if end < 0:
                yield begin, mapped, view, begin, size, False
                break
            yield begin, mapped, view, begin, end, True
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


def iter_line_chunks(mapped: mmap.mmap, start: int, chunk_bytes: int) -> Iterator[tuple[int, int]]:
    """(begin, stop) of the lines of a `read_only_map` from `start`, about `chunk_bytes` of them at a
    time, for readers that hand a chunk of lines to one decode call: each chunk ends just past a
    newline (the last at the end of the file, maybe without one), a long line is whole. Passed
    pages are dropped as `iter_mapped_lines` drops them."""
    size = len(mapped)
    dropped = start - start % mmap.PAGESIZE
    begin = start
    while begin < size:
        newline = mapped.find(b"\n", min(begin + chunk_bytes, size) - 1)
        stop = size if newline < 0 else newline + 1
        yield begin, stop
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


def iter_json_lines(
    path: Path,
    issues: list[SourceIssue],
    *,
    recover: Callable[[str], list] | None = None,
    start: int = 0,
) -> Iterator[JsonLine]:
    """Parsed values of each non-blank line; problems go to `issues`.

    `recover(text)` may salvage objects from a line that does not parse (Qwen
    scans for complete top-level `{…}` objects); what it returns is yielded.
    """
    number = 0
    for offset, buffer, view, begin, end, terminated in iter_line_spans(path, start=start):
        number += 1
        for value in line_values(path, number, buffer, view, begin, end, terminated, issues, recover):
            yield JsonLine(number, offset, value)


def line_values(
    path: Path, number: int, buffer, view: memoryview, begin: int, end: int, terminated: bool,
    issues: list[SourceIssue], recover: Callable[[str], list] | None = None,
) -> list:
    """The values `iter_json_lines` takes from line `number` (`buffer[begin:end]`): one, none (a
    blank or bad line, with its issue), or what `recover` salvaged. The exact path of every reader."""
    try:
        # orjson skips JSON whitespace itself and accepts valid UTF-8 only, so a line it parses
        # needs neither stripping nor another check.
        return [orjson.loads(view[begin:end])]
    except orjson.JSONDecodeError:
        pass
    stripped = buffer[begin:end].strip()
    if not stripped:
        return []
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        try:
            value = stdlib_loads(stripped.decode("utf-8", "replace"))
        except ValueError as exc:
            deep = isinstance(exc, NestedTooDeep)  # JSON.parse reads it (V8 does not recurse): nothing to salvage
            salvaged = recover(stripped.decode("utf-8", "replace")) if recover and not deep else []
            if not salvaged:
                issues.append(_bad_line_issue(path, number, terminated, len(stripped), exc))
            return salvaged
        if not is_valid_utf8(stripped):
            issues.append(SourceIssue(path, number, "invalid UTF-8 bytes shown as U+FFFD", "note"))
    return [value]


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
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")
