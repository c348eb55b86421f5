"""Gemini CLI messages kept as places in the file, not as dicts: the JSON Lines replay.

A long session appends every message several times (an id appended again
replaces the earlier copy) and most of its bytes are tool outputs; holding every
surviving message decoded made the reader's memory grow with the file (368 MiB
for 100 MB). Here each message is read once, by one pass that checks its strings
as JSON.parse does and measures the long ones (`rawjson.scan_value`), and kept as
a `MessageSpan`: where it is, and a copy with its long strings replaced by ""
(small: the decode that routes it reads only that). The history, the UI scan and
the side channels decode the surviving messages one at a time later, exactly
(`load`), or with their tool outputs as head and JS length (`gemini.measured`).

Records that are not messages (rewinds, `$set`, metadata) are applied as orjson
decodes them. Every line the fast route cannot vouch for takes the exact path
(`line_values`, then `ConversationState.apply`) and keeps its decoded value:
invalid UTF-8 (the exact path decodes it with U+FFFD and notes it), lines orjson
refuses (torn, blank, not an object, NaN, lone surrogate escapes, too deep),
whitespace before the value, and records other than messages with long strings
(a `$set` of whole messages: rare).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from doctor.core import rawjson
from doctor.sources.base import SourceError, SourceIssue, open_session_file
from doctor.sources.jsonl import iter_mapped_lines, line_values, loads, over_cap_issue

# A string value this long (its JSON token, in bytes) is measured by the scan and left out of the
# copy that is decoded; the history decodes it only when it is not a tool output or display.
SHORTEN_FROM = 256
_OPEN_BRACE = 0x7B
_WHITESPACE = b" \t\r\n"


class MessageSpan:
    """A message record at `offset` (`length` bytes) of the file. `short`: the record with its long
    strings replaced by "" (None when it has none, or without the C scan: read it whole), and `long`
    where each of those sits: (position of its "" in `short`, file offset of its token, of the
    token's end, JS length of the string)."""

    __slots__ = ("offset", "length", "short", "long")

    def __init__(self, offset: int, length: int, short: bytes | None, long: tuple):
        self.offset, self.length, self.short, self.long = offset, length, short, long


def scanned_record(buffer, start: int, stop: int, offset: int, scan) -> tuple[str | None, object] | None:
    """What the line `buffer[start:stop]` (at file `offset`) holds when it is one JSON object, read as
    orjson reads it: (id, span) for a message (a string `id`, no string `$rewindTo`), (None, the
    record) for another record decoded whole; None when the exact path must decide. `scan`:
    `rawjson.scan_value`, or None to decode the line whole (without the C module: finding the value's
    end in Python would cost more than decoding it)."""
    if start >= stop or buffer[start] != _OPEN_BRACE:
        return None
    scanned = (stop, None, (), 0, False) if scan is None else scan(buffer, start, stop, SHORTEN_FROM)
    if scanned is None:
        return None
    end, short, long, _, lone = scanned
    if lone or (end < stop and buffer[end:stop].strip(_WHITESPACE)):
        return None
    try:
        record = orjson.loads(memoryview(buffer)[start:end] if short is None else short)
    except orjson.JSONDecodeError:
        return None
    ident = record.get("id")
    if type(ident) is not str or not ident or type(record.get("$rewindTo")) is str:
        return (None, record) if short is None else None  # "" may be a long id the copy left out
    shift = offset - start
    if shift and long:
        long = tuple((at, begin + shift, end + shift, units) for at, begin, end, units in long)
    return ident, MessageSpan(offset, stop - start, short, long)


def replay(path: Path, state, issues: list[SourceIssue]) -> None:
    """Every line of `path` into `state` (a ConversationState): messages as `MessageSpan`s, other
    records as orjson decodes them, every line `scanned_record` cannot vouch for by the exact path."""
    number = 0
    messages = state.messages
    scan = rawjson.scan_value if rawjson.accelerated else None
    for offset, buffer, view, begin, end, terminated in iter_mapped_lines(path):
        number += 1
        if buffer is None:  # longer than LINE_CAP: measured, not read
            issues.append(over_cap_issue(path, number, end - begin))
            continue
        kept = scanned_record(buffer, begin, end, offset, scan)
        if kept is not None:
            ident, value = kept
            if ident is None:
                state.apply(value)
            else:
                state.records += 1
                messages[ident] = value
            continue
        for value in line_values(path, number, buffer, view, begin, end, terminated, issues):
            state.apply(value)


def iter_messages(path: Path, entries: Iterable, decode=None) -> Iterator[dict]:
    """The messages `entries` (spans or decoded dicts) stand for, decoded one at a time by
    `decode(path, fd, span)` (`load` when None)."""
    decode = decode or load
    handle = None
    try:
        for entry in entries:
            if isinstance(entry, dict):
                yield entry
                continue
            if handle is None:
                handle = open_session_file(path)
            yield decode(path, handle.fileno(), entry)
    finally:
        if handle is not None:
            handle.close()


def load(path: Path, fd: int, span: MessageSpan) -> dict:
    """The message at `span` of the open file `fd`, decoded whole as the exact path did."""
    data = os.pread(fd, span.length, span.offset)
    try:
        value = loads(data) if len(data) == span.length else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise SourceError(path, f"changed while being read (the message at byte {span.offset} is gone)")
    return value
