"""Replay a Gemini CLI JSON Lines file keeping each message as a span of the file, not a dict.

A long session appends every message several times (an id appended again
replaces the earlier copy) and most of its bytes are tool outputs; holding every
surviving message decoded made the reader's memory grow with the file (368 MiB
for 100 MB). Here a message line is only routed: one typed msgspec decode reads
the keys that decide what the record is (`$rewindTo`, `id`, `$set`, the
session keys) and skips the rest, and the message is kept as (offset, length).
`load` decodes it again, exactly as the line was decoded before (orjson, the
stdlib for its refusals), when the history, the UI scan and the side channels
are built, one message at a time.

Every line the fast route cannot vouch for takes the exact path (`line_values`,
then `ConversationState.apply`) and keeps its decoded value: invalid UTF-8
(msgspec does not check skipped strings; the exact path decodes it with U+FFFD
and notes it), lines msgspec refuses (torn, blank, not an object, NaN, lone
surrogate escapes, too deep), ids it cannot decode, and every record that is
not a message (rewinds, `$set`, metadata: small, and rare).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from doctor.sources.base import SourceError, SourceIssue, open_session_file
from doctor.sources.jsonl import iter_line_spans, line_values, loads


class _Route(msgspec.Struct):
    """The keys ConversationState.apply decides on; every other key is skipped unread."""

    rewind: msgspec.Raw = msgspec.field(name="$rewindTo", default=msgspec.Raw())
    id: msgspec.Raw = msgspec.field(default=msgspec.Raw())


_ROUTE = msgspec.json.Decoder(_Route)
_STRING = msgspec.json.Decoder(str)


def fast_message_id(line) -> str | None:
    """The id of a message record (a JSON object with a string `id` and no string `$rewindTo`),
    or None: the line then takes the exact path. `line` must be valid UTF-8."""
    try:
        route = _ROUTE.decode(line)
        if memoryview(route.id)[:1] != b'"' or memoryview(route.rewind)[:1] == b'"':
            return None
        return _STRING.decode(route.id)
    except (msgspec.DecodeError, RecursionError):
        return None


def replay(path: Path, state, issues: list[SourceIssue]) -> None:
    """Every line of `path` into `state` (a ConversationState): messages the fast route reads
    as (offset, length) spans, every other line decoded by the exact path."""
    number = 0
    messages = state.messages
    for offset, buffer, view, begin, end, terminated, valid in iter_line_spans(path):
        number += 1
        ident = fast_message_id(view[begin:end]) if valid else None
        if ident is not None:
            state.records += 1
            messages[ident] = (offset, end - begin)
            continue
        for value in line_values(path, number, buffer, view, begin, end, terminated, issues):
            state.apply(value)


def iter_messages(path: Path, entries: Iterable) -> Iterator[dict]:
    """The messages `entries` (spans or decoded dicts) stand for, decoded one at a time."""
    handle = None
    try:
        for entry in entries:
            if isinstance(entry, dict):
                yield entry
                continue
            if handle is None:
                handle = open_session_file(path)
            yield load(path, handle, entry)
    finally:
        if handle is not None:
            handle.close()


def load(path: Path, handle, span: tuple[int, int]) -> dict:
    """The message at `span` (offset, length) of the open file, decoded as the exact path did."""
    offset, length = span
    data = os.pread(handle.fileno(), length, offset)
    try:
        value = loads(data) if len(data) == length else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise SourceError(path, f"changed while being read (the message at byte {offset} is gone)")
    return value
