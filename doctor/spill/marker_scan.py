"""Which lines of a session file mention a spill pointer: the substring test before any parsing.

The spill audit parses only the lines that hold one of a few markers (every stub form's
and side channel's wording), so that reading a 1 GB session for pointers costs one pass
of substring tests, not a JSON decode of every line. That pass is `rawjson.marked_lines`
over runs of whole lines of a read-only map of the file (C: every marker and the newlines
in one pass; else a `bytes.find` pass per marker), and it counts the lines on the way: the
audit hands the count to `jsonl.count_records`, so the scan's record count does not read
the file again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from doctor.core.rawjson import marked_lines
from doctor.sources.base import open_session_file
from doctor.sources.jsonl import (
    LINE_CAP,
    READ_CHUNK,
    content_identity,
    iter_line_chunks,
    read_only_map,
    remember_record_count,
)

NEWLINE = 0x0A

# A line is parsed only when it holds one of these (the JSON-escaped forms included).
MARKERS = (
    b"saved to",
    b"Persisted tool-output artifact",
    b"For full output see",
    b"available at: ",
    b"persistedOutputPath",
    b"autobot:spill:",
)


def lines_mentioning_pointers(path: Path, *, chunk_size: int = READ_CHUNK,
                              remember_count: bool = False) -> Iterator[bytes]:
    """The lines (without their newline) that hold a marker, in file order.

    Runs of whole lines of about `chunk_size` bytes are searched at once and only the
    lines holding a hit are copied out. With `remember_count`, once every line has been
    read, the file's line count (what `count_records` counts) is remembered for it."""
    before = content_identity(path) if remember_count else None
    newlines = 0
    unterminated = False  # the last line has no newline
    for buffer, start, stop in _line_runs(path, chunk_size):
        spans, found = marked_lines(buffer, start, stop, MARKERS)
        newlines += found
        unterminated = buffer[stop - 1] != NEWLINE
        for begin, end in spans:
            yield buffer[begin:end]
    if before is not None:  # the count goes with the file as it was: a changed file is counted anew
        remember_record_count(before, newlines + unterminated)


def _line_runs(path: Path, chunk_size: int) -> Iterator[tuple[object, int, int]]:
    """(buffer, start, stop): the file's lines, about `chunk_size` bytes of whole lines at a time,
    from a read-only map of it; read in chunks where it cannot be mapped (empty, a pipe)."""
    with read_only_map(path) as mapping:
        if mapping is not None:
            mapped, _ = mapping
            for start, stop, readable in iter_line_chunks(mapped, 0, chunk_size):
                if readable:
                    yield mapped, start, stop
                else:  # longer than LINE_CAP: scanned as an empty line (counted, never searched)
                    yield (b"\n", 0, 1) if mapped[stop - 1] == NEWLINE else (b" ", 0, 1)
            return
    yield from _read_runs(path, chunk_size)


def _read_runs(path: Path, chunk_size: int) -> Iterator[tuple[bytes, int, int]]:
    """`_line_runs` from reads: a line longer than a chunk is gathered whole first, up to LINE_CAP;
    a longer one is dropped as it is read and scanned as an empty line."""
    with open_session_file(path) as handle:
        pending: list[bytes] = []
        held = 0
        while chunk := handle.read(chunk_size):
            ended = chunk.rfind(b"\n") + 1
            if not ended:
                held += len(chunk)
                if held <= LINE_CAP:
                    pending.append(chunk)
                else:
                    pending.clear()
                continue
            if held > LINE_CAP:  # the over-long line ends in this chunk
                first = chunk.find(b"\n") + 1
                yield b"\n", 0, 1
                chunk, ended = chunk[first:], ended - first
                held = 0
                if not ended:
                    pending, held = ([chunk], len(chunk)) if chunk else ([], 0)
                    continue
            data = b"".join((*pending, chunk)) if pending else chunk
            whole = len(data) - (len(chunk) - ended)
            yield data, 0, whole
            pending = [data[whole:]] if whole < len(data) else []
            held = len(data) - whole
        if held > LINE_CAP:
            yield b" ", 0, 1
        elif held:
            rest = b"".join(pending)
            yield rest, 0, len(rest)
