"""A legacy Gemini CLI session (`session-….json`, one ConversationRecord) read as a stream.

The CLI rewrote the whole record on every update, pretty-printed:
`{"sessionId": …, "projectHash": …, …, "messages": [{…}, {…}, …]}`. Decoding it
whole held every message at once (the reader's memory grew with the file). Here
the file is mapped and walked value by value: the top-level keys are decoded
(small), and each element of `messages` is scanned once (`rawjson.scan_value`:
strings checked as JSON.parse reads them, long ones measured and left out of a
short copy) and kept as a `spans.MessageSpan`, as a JSON Lines message is; the
pages passed are dropped from the process as it goes.

The exact reading is one decode of the whole file (orjson, else the stdlib with
U+FFFD for invalid UTF-8, which can decode numbers differently for the whole
document). The stream stands in for it only when orjson would take every piece
of the document as it is, which is what makes decoding the messages one by one
give the same values: an object with string keys, a messages list of objects,
no lone surrogate escape, nothing orjson refuses, nesting orjson accepts, nothing
after the object, and the session keys `ConversationState.apply` routes a
document by. Anything else is read the exact way (`whole`), including every
error it reports.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path

import orjson

from doctor.core import rawjson
from doctor.sources.base import SourceError
from doctor.sources.gemini.spans import SHORTEN_FROM, MessageSpan
from doctor.sources.jsonl import DROP_EVERY, LINE_CAP, drop_pages_behind, loads, over_cap_message, read_document, read_only_map

_WHITESPACE = re.compile(rb"[ \t\n\r]*")
_SCALAR = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
# Deepest nesting orjson decodes (it refuses 1,025 levels); a message sits two levels down.
_ORJSON_DEPTH = 1024
_NEVER = 1 << 62  # a shortening threshold no string reaches


def replay(path: Path, state) -> None:
    """The document at `path` into `state` (a ConversationState), streamed when it can be."""
    streamed = stream(path)
    if streamed is None:
        state.apply(whole(path))
        return
    metadata, messages = streamed
    state.records += 1
    state.metadata.update(metadata)
    state.messages.update(messages)


def whole(path: Path) -> object:
    """The exact reading: the whole document decoded at once (none past LINE_CAP: SourceError)."""
    data = read_document(path)
    if data is None:
        raise SourceError(path, f"{over_cap_message(path.stat().st_size)} (a legacy Gemini CLI session)")
    try:
        return loads(data)
    except ValueError as exc:
        raise SourceError(path, f"not a valid Gemini CLI session JSON document ({exc})") from None


def stream(path: Path) -> tuple[dict, dict] | None:
    """(metadata, messages by id) as the exact reading would replay them, or None when the document is
    not one the stream stands in for (see the module docstring)."""
    with read_only_map(path) as mapping:
        return None if mapping is None else _Walk(mapping[0]).document()


class _Refused(Exception):
    """The document is not one the stream stands in for."""


class _Walk:
    """A walk over the mapped document, dropping the pages behind it."""

    def __init__(self, buffer: mmap.mmap) -> None:
        self.buffer, self.size, self.dropped = buffer, len(buffer), 0
        self.scan = rawjson.scan_value

    def document(self) -> tuple[dict, dict] | None:
        try:
            metadata, messages = self._object()
        except _Refused:
            return None
        if isinstance(metadata.get("$rewindTo"), str) or isinstance(metadata.get("id"), str) or \
                isinstance(metadata.get("$set"), dict):
            return None  # routed as a record of another kind: the exact reading says what it is
        if not (isinstance(metadata.get("sessionId"), str) and isinstance(metadata.get("projectHash"), str)):
            return None
        return metadata, messages

    def _object(self) -> tuple[dict, dict]:
        """The top-level object: its keys' values (`messages` left out), the messages by id."""
        at = self._skip(0)
        self._expect(at, b"{")
        at = self._skip(at + 1)
        metadata, messages = {}, {}
        if self.buffer[at : at + 1] != b"}":
            while True:
                key, at = self._value(at, string=True)
                at = self._skip(at)
                self._expect(at, b":")
                at = self._skip(at + 1)
                if key == "messages" and self.buffer[at : at + 1] == b"[":
                    messages, at = self._messages(at)
                    metadata.pop(key, None)
                else:
                    value, at = self._value(at)
                    metadata[key] = value
                    if key == "messages":
                        messages = {}
                at = self._skip(at)
                if self.buffer[at : at + 1] != b",":
                    break
                at = self._skip(at + 1)
        self._expect(at, b"}")
        if self._skip(at + 1) != self.size:
            raise _Refused
        return metadata, messages

    def _messages(self, at: int) -> tuple[dict, int]:
        """The `messages` array opening at `at`: each element kept as a MessageSpan; and where it ends."""
        messages = {}
        at = self._skip(at + 1)
        if self.buffer[at : at + 1] == b"]":
            return messages, at + 1
        while True:
            if self.buffer[at : at + 1] != b"{":
                raise _Refused  # a message that is not an object: the exact reading skips it
            scanned = self.scan(self.buffer, at, min(self.size, at + LINE_CAP), SHORTEN_FROM)
            if scanned is None:
                raise _Refused  # invalid, or a message longer than LINE_CAP: the exact reading says which
            end, short, long, deepest, lone = scanned
            record = self._decode(at, end, short, deepest + 2, lone)
            ident = record.get("id")
            if ident == "":
                raise _Refused  # maybe a long id the copy left out
            if isinstance(ident, str):
                messages[ident] = MessageSpan(at, end - at, short, long)
            at = self._skip(end)
            self._drop_before(at)
            if self.buffer[at : at + 1] != b",":
                break
            at = self._skip(at + 1)
        self._expect(at, b"]")
        return messages, at + 1

    def _value(self, at: int, string: bool = False) -> tuple[object, int]:
        """The value at `at` (a string when `string`), decoded, and where it ends."""
        opening = self.buffer[at : at + 1]
        if opening in (b"{", b"[", b'"'):
            scanned = self.scan(self.buffer, at, min(self.size, at + LINE_CAP), _NEVER)
            if scanned is None or (string and opening != b'"'):
                raise _Refused
            end, _, _, deepest, lone = scanned
            return self._decode(at, end, None, deepest + 1, lone), end
        match = _SCALAR.match(self.buffer, at)
        if match is None or string:
            raise _Refused
        return self._decode(at, match.end(), None, 0, False), match.end()

    def _decode(self, start: int, end: int, short: bytes | None, depth: int, lone: bool) -> object:
        """orjson's value for the piece (its short copy when there is one), refused where orjson would
        refuse the whole document."""
        if lone or depth > _ORJSON_DEPTH:
            raise _Refused
        try:
            return orjson.loads(self.buffer[start:end] if short is None else short)
        except orjson.JSONDecodeError:
            raise _Refused from None

    def _skip(self, at: int) -> int:
        return _WHITESPACE.match(self.buffer, at).end()

    def _expect(self, at: int, token: bytes) -> None:
        if self.buffer[at : at + 1] != token:
            raise _Refused

    def _drop_before(self, at: int) -> None:
        """Give back the pages before `at` every DROP_EVERY bytes (they stay in the page cache)."""
        if at - self.dropped >= DROP_EVERY:
            self.dropped = drop_pages_behind(self.buffer, self.dropped, at)
