"""Which lines of a session file mention a spill pointer: the substring test before any parsing.

The spill audit parses only the lines that hold one of a few markers (every stub form's
and side channel's wording), so that reading a 1 GB session for pointers costs a pass of
substring tests, not a JSON decode of every line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from doctor.sources.base import open_session_file
from doctor.sources.jsonl import READ_CHUNK

# A line is parsed only when it holds one of these (the JSON-escaped forms included).
_MARKERS = (
    b"saved to",
    b"Persisted tool-output artifact",
    b"For full output see",
    b"available at: ",
    b"persistedOutputPath",
    b"autobot:spill:",
)


def _mentions_pointer(raw: bytes) -> bool:
    return any(marker in raw for marker in _MARKERS)


def lines_mentioning_pointers(path: Path, *, chunk_size: int = READ_CHUNK) -> Iterator[bytes]:
    """The lines (without their newline) that hold a marker, in file order.

    Each chunk of whole lines is searched once per marker with `bytes.find` and only
    the lines around a hit are cut out: testing every line in Python cost half as much
    as reading the session. A line longer than a chunk is gathered whole first."""
    with open_session_file(path) as handle:
        pending: list[bytes] = []
        while chunk := handle.read(chunk_size):
            ended = chunk.rfind(b"\n") + 1
            if not ended:
                pending.append(chunk)
                continue
            data = b"".join((*pending, chunk)) if pending else chunk
            whole = len(data) - (len(chunk) - ended)
            yield from _marked_lines(data, whole)
            pending = [data[whole:]] if whole < len(data) else []
        rest = b"".join(pending)
        yield from _marked_lines(rest, len(rest))


def _marked_lines(data: bytes, end: int) -> Iterator[bytes]:
    """The lines of `data[:end]` (whole lines) that hold a marker; a line is cut out once."""
    lines: dict[int, int] = {}
    for marker in _MARKERS:
        at = data.find(marker, 0, end)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", at, end)
            if stop < 0:
                stop = end
            lines[start] = stop
            at = data.find(marker, stop, end)
    for start in sorted(lines):
        yield data[start:lines[start]]
