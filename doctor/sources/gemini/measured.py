"""Gemini CLI messages for the retention analysis: long tool outputs and displays measured, not decoded.

The analysis, the UI scan and the side-channel counts need only the JS length
of a tool output (`functionResponse.response.output` / `.error`, in a user
message's content or a call's `result`) or of a string `resultDisplay`, and its
head for the sentinel tests. The pass that kept the message (`spans`) measured
every long string already; here the message is decoded from its short copy and
those strings become `MeasuredText` (head and JS length). Which "" of the copy
stands for which string is read from a typed msgspec decode (a `msgspec.Raw`
shares the copy's memory, so `offset_in` says exactly where it came from); a
long string anywhere else (a prompt, model text, call arguments, a structured
display) and an output whose head is a sentinel header (parsed later, whole) is
put back from the file before the copy is decoded, so it comes out exact.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec
import orjson

from doctor.core.jsvalues import MeasuredText
from doctor.core.rawjson import offset_in, token_head
from doctor.core.sentinels import SENTINEL_PREFIXES
from doctor.sources.gemini.spans import MessageSpan, iter_messages, load

# Bytes of a long token read back for its head (at least rawjson.HEAD_CHARS characters).
_HEAD_BYTES = 512



class _Response(msgspec.Struct):
    output: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


class _FunctionResponse(msgspec.Struct):
    response: _Response | None = None


class _Part(msgspec.Struct):
    functionResponse: _FunctionResponse | None = None


_Parts = list[_Part | str] | _Part | str | None


class _Call(msgspec.Struct):
    result: _Parts = None
    resultDisplay: msgspec.Raw = msgspec.Raw()


class _Message(msgspec.Struct):
    """Where a message's tool outputs and displays can be; a message of another shape is decoded whole."""

    content: _Parts = None
    toolCalls: list[_Call] | None = None


_MESSAGE = msgspec.json.Decoder(_Message)


def iter_measured(path: Path, entries: Iterable) -> Iterator[dict]:
    """The messages `entries` (spans or decoded dicts) stand for, long outputs and displays measured."""
    return iter_messages(path, entries, measured)


def measured(path: Path, fd: int, span: MessageSpan) -> dict:
    """The message at `span`, its long tool outputs and string displays as MeasuredText."""
    if not span.long:
        return load(path, fd, span)
    places = _output_places(span)
    texts = {}
    try:
        for at, (path_in_message, start, end, units) in places.items():
            head = token_head(os.pread(fd, min(_HEAD_BYTES, end - start - 1), start))
            if head is not None and not head.startswith(SENTINEL_PREFIXES):
                output = path_in_message[-1] in ("output", "error")  # a response's, not a display
                texts[at] = MeasuredText(head, units, json_token=(str(path), start, end) if output else None)
        message = orjson.loads(_restored(fd, span, texts))
        for at, text in texts.items():
            *keys, last = places[at][0]
            holder = message
            for key in keys:
                holder = holder[key]
            if holder[last] != "":
                raise ValueError("the decoders disagree on where a string is")
            holder[last] = text
    except (ValueError, LookupError, TypeError):  # the file changed since, or shapes the decoders read apart
        return load(path, fd, span)
    return message


def _output_places(span: MessageSpan) -> dict[int, tuple]:
    """For each long string of `span` that is a tool output or a string display: its position in the
    short copy -> (its path in the message, file start, file end, JS length)."""
    short = span.short
    try:
        message = _MESSAGE.decode(short)
    except (msgspec.DecodeError, RecursionError):
        return {}
    by_position = {at: (start, end, units) for at, start, end, units in span.long}
    places = {}

    def note(raw: msgspec.Raw, path: tuple) -> None:
        if len(raw) == 2:
            at = offset_in(raw, short)
            if at in by_position:
                places[at] = (path, *by_position[at])

    def parts(value: object, path: tuple) -> None:
        for index, part in enumerate(value) if type(value) is list else ((None, value),):
            fr = part.functionResponse if type(part) is _Part else None
            if fr is not None and fr.response is not None:
                where = (*path, index, "functionResponse", "response") if index is not None else \
                    (*path, "functionResponse", "response")
                note(fr.response.output, (*where, "output"))
                note(fr.response.error, (*where, "error"))

    parts(message.content, ("content",))
    for index, call in enumerate(message.toolCalls or ()):
        note(call.resultDisplay, ("toolCalls", index, "resultDisplay"))
        parts(call.result, ("toolCalls", index, "result"))
    return places


def _restored(fd: int, span: MessageSpan, kept_out: dict) -> bytes:
    """The short copy with every long string not in `kept_out` (positions) read back from the file."""
    pieces, last = [], 0
    short = span.short
    for at, start, end, _ in span.long:
        if at in kept_out:
            continue
        pieces += (short[last:at], os.pread(fd, end - start, start))
        last = at + 2
    if not pieces:
        return short
    pieces.append(short[last:])
    return b"".join(pieces)
