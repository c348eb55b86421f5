"""One Qwen Code 0.24.4 recording line, read and validated the way `--resume` does.

Qwen reads its `.jsonl` with `parseLineTolerantWithIntegrity` (chunk-2VS5EEXU.js):
`JSON.parse` of the trimmed line, keeping only objects; when that fails,
`recoverObjectsFromLine` salvages every complete top-level `{…}` (two records
glued onto one line, a record followed by a torn one). Then
`validateTranscriptRecord` (chunk-JBUMBQAO.js) drops records with bad identity
fields or an unknown type and normalises `message` to `{role?, parts?}`.
Both passes of the reader (the index and the re-read of the chain) go through
these functions, so a line always yields the same records in the same order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec
from orjson import loads as _orjson_loads

from doctor.core.rawjson import string_units
from doctor.sources.jsonl import NestedTooDeep, loads

RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
# System subtypes `selectTranscriptLeaf` and the chain lookup ignore (artifact and
# managed-session bookkeeping, source snapshots).
NON_CONVERSATION_SUBTYPES = frozenset(
    {
        "session_artifact_event",
        "session_artifact_snapshot",
        "session_sources_snapshot",
        "managed_session_header_v1",
        "managed_session_event_v1",
        "managed_session_commit_v1",
    }
)
_STRUCTURAL = re.compile(r'[{}"\\]')
_ABSENT = msgspec.Raw(b"")


class ShellDisplay(msgspec.Struct):
    """A structured `resultDisplay`: its type, and a shell result's two copies of the output, raw."""

    type: Any = None
    text: msgspec.Raw = _ABSENT
    output: msgspec.Raw = _ABSENT


class _ToolCallResult(msgspec.Struct):
    resultDisplay: msgspec.Raw = _ABSENT  # a string, a ShellDisplay, null, or something `add` judges


class IndexFields(msgspec.Struct):
    """What pass 1 needs from a record, decoded without building the rest.

    msgspec validates the whole line as JSON while skipping unknown fields, so
    a line it accepts is one `JSON.parse` accepts (it is stricter only where
    the caller falls back to `parse_line`: lone surrogate escapes, wrong field
    types, a missing identity field). The types here are the ones
    `validateTranscriptRecord` wants; anything else raises and takes the slow
    path, which reports the problem exactly as before.
    """

    uuid: str
    parentUuid: str | None
    sessionId: str
    type: str
    subtype: Any = None
    toolCallResult: _ToolCallResult | None = None  # a display of another JSON type raises
    systemPayload: msgspec.Raw = _ABSENT
    message: msgspec.Raw = _ABSENT  # skipped, but its length lets pass 2 read just these bytes
    goalContext: msgspec.Raw = _ABSENT


class HistoryFields(msgspec.Struct):
    """The fields the API history rebuild reads; `toolCallResult` (the UI copy) is skipped.

    The payloads stay raw and are decoded by orjson (`loads`), so their values
    are exactly what `parse_line` would give (orjson and msgspec differ on
    integers beyond 64 bits).
    """

    type: Any = None
    subtype: Any = None
    message: msgspec.Raw = _ABSENT
    systemPayload: msgspec.Raw = _ABSENT
    goalContext: msgspec.Raw = _ABSENT


class UiRecordFields(msgspec.Struct):
    """What the UI history reads from a tool_result record: its `toolCallResult`, raw."""

    type: Any = None
    toolCallResult: msgspec.Raw = _ABSENT


class UiResultFields(msgspec.Struct):
    resultDisplay: msgspec.Raw = _ABSENT


INDEX_DECODER = msgspec.json.Decoder(IndexFields)
SHELL_DISPLAY_DECODER = msgspec.json.Decoder(ShellDisplay)
UI_RECORD_DECODER = msgspec.json.Decoder(UiRecordFields)
UI_RESULT_DECODER = msgspec.json.Decoder(UiResultFields)
HISTORY_DECODER = msgspec.json.Decoder(HistoryFields)
FAST_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError)  # deep: the exact path says


def raw_string_length(raw: msgspec.Raw, shortened=None) -> int:
    """JS length of a raw JSON value when it is a string, else 0 (absent counts 0).

    Counted from the bytes (`string_units`), or taken from `shortened` (a `ShortenedLine`)
    when the value is one of the strings `scan_line` replaced by "". Raises ValueError
    when the string cannot be measured that way (invalid UTF-8), so the caller takes
    the exact path.
    """
    if not raw:
        return 0
    view = memoryview(raw)
    if view[0] != 0x22:
        return 0
    if shortened is not None and len(view) == 2:
        units = shortened.units_at(raw)
        if units is not None:
            return units
    units = string_units(view)
    if units is None:
        raise ValueError("string not measurable from its bytes")
    return units


def display_chars_of(raw: msgspec.Raw, shortened=None) -> int | None:
    """`display_chars` of a raw `resultDisplay` (-1 when absent or null), or None when it is
    neither a string nor a shell_result display (the caller then measures the whole record).

    Raises ValueError (msgspec's errors included) when it must be judged by the exact path.
    """
    if not raw:
        return -1
    first = memoryview(raw)[0]
    if first == 0x22:
        return raw_string_length(raw, shortened)
    if first == 0x6E:  # null
        return -1
    if first != 0x7B:
        return None
    display = SHELL_DISPLAY_DECODER.decode(raw)
    if display.type != "shell_result":
        return None
    text, output = display.text, display.output
    chars = raw_string_length(text, shortened)
    return chars * 2 if output == text and shortened is None else chars + raw_string_length(output, shortened)


def normalized_message(message: object) -> dict | None:
    """`message` as `merge_fragments([normalized_record(...)])` leaves it: `{role?, parts}` or None."""
    if type(message) is not dict:
        return None
    normalized: dict = {}
    role = message.get("role")
    if isinstance(role, str):
        normalized["role"] = role
    parts = message.get("parts")
    normalized["parts"] = parts if type(parts) is list else []
    return normalized


def history_record(line: bytes) -> dict:
    """`merge_fragments([normalized_record(parse_line(line)[0][0])])` for a one-record line,
    reduced to the fields the history reads.

    Raises one of FAST_ERRORS when the line needs the full path (it does not
    decode, or a payload has bytes orjson refuses).
    """
    fields = HISTORY_DECODER.decode(line)
    subtype = fields.subtype
    record = {"type": fields.type, "subtype": subtype if isinstance(subtype, str) else None, "message": None}
    if fields.message:
        record["message"] = normalized_message(_orjson_loads(memoryview(fields.message)))
    if fields.systemPayload:
        record["systemPayload"] = _orjson_loads(memoryview(fields.systemPayload))
    if fields.goalContext:
        record["goalContext"] = _orjson_loads(memoryview(fields.goalContext))
    return record


def recover_objects_from_line(line: str) -> list:
    """Port of `recoverObjectsFromLine`: complete top-level objects, strings and escapes aware.

    Only the records matter to the rebuild (the `complete` flag feeds source
    restoration, not the history), so only they are returned.
    """
    found: list = []
    depth = 0
    in_string = False
    escaped_at = -1
    start = -1
    for match in _STRUCTURAL.finditer(line):
        index = match.start()
        if index == escaped_at:
            continue
        char = line[index]
        if in_string:
            if char == "\\":
                escaped_at = index + 1
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and start >= 0:
                try:
                    found.append(loads(line[start : index + 1]))
                except ValueError:
                    pass
                start = -1
            elif depth < 0:
                depth = 0
                start = -1
    return found


def parse_line(stripped: bytes) -> tuple[list, str | None]:
    """The objects Qwen reads from one trimmed, non-blank line, and why it read none.

    Returns (objects, problem): a non-object value is dropped ("not a JSON
    object"); an unparsable line yields whatever recovery salvaged, with the
    problem "invalid JSON" when that is nothing and "recovered" otherwise; "too deep" for a value
    nested deeper than Python decodes (JSON.parse would read it, but nothing can be salvaged).
    """
    try:
        value = loads(stripped)
    except NestedTooDeep:
        return [], "too deep"
    except ValueError:
        salvaged = [v for v in recover_objects_from_line(stripped.decode("utf-8", "replace")) if type(v) is dict]
        return salvaged, "recovered" if salvaged else "invalid JSON"
    if type(value) is dict:
        return [value], None
    return [], "not a JSON object"


def identity_problem(value: dict) -> str | None:
    """Why `validateTranscriptRecord` would skip this record, or None to keep it."""
    uuid = value.get("uuid")
    parent = value.get("parentUuid", _MISSING)
    session_id = value.get("sessionId")
    if not isinstance(uuid, str) or not uuid:
        return "no uuid"
    if parent is not None and not isinstance(parent, str):
        return "parentUuid is neither a string nor null"
    if not isinstance(session_id, str) or not session_id:
        return "no sessionId"
    if value.get("type") not in RECORD_TYPES:
        return f"unknown record type {value.get('type')!r}"
    return None


_MISSING = object()


def is_conversation_record(value: Mapping) -> bool:
    """`isTranscriptConversationRecord`: everything but artifact and managed-session bookkeeping."""
    return not (value.get("type") == "system" and value.get("subtype") in NON_CONVERSATION_SUBTYPES)


def normalized_record(value: dict) -> dict:
    """The record as `validateTranscriptRecord` returns it: `message` reduced to `{role?, parts?}`.

    The caller has checked `identity_problem`; a `message` that is not an object
    becomes absent, and parts that are not an array are dropped.
    """
    record = dict(value)
    subtype = value.get("subtype")
    record["subtype"] = subtype if isinstance(subtype, str) else None
    message = value.get("message")
    if type(message) is dict:
        normalized: dict = {}
        if isinstance(message.get("role"), str):
            normalized["role"] = message["role"]
        if type(message.get("parts")) is list:
            normalized["parts"] = message["parts"]
        record["message"] = normalized
    else:
        record["message"] = None
    return record


def merge_fragments(fragments: list[dict]) -> dict:
    """`aggregateTranscriptRecordFragments`: records sharing a uuid become one.

    Parts are concatenated in file order under the first fragment's role;
    `usageMetadata` takes the last value, `toolCallResult` and `model` the
    first, `timestamp` the greatest.
    """
    first = fragments[0]
    merged = dict(first)
    message = first["message"]
    if message is not None:
        message = {**message, "parts": list(message.get("parts") or ())}
    for fragment in fragments[1:]:
        extra = fragment["message"]
        if extra is not None:
            if message is not None:
                message = {"role": message.get("role"), "parts": [*message["parts"], *(extra.get("parts") or ())]}
            else:
                message = {**extra, "parts": list(extra.get("parts") or ())}
        if fragment.get("usageMetadata"):
            merged["usageMetadata"] = fragment["usageMetadata"]
        if fragment.get("toolCallResult") and not merged.get("toolCallResult"):
            merged["toolCallResult"] = fragment["toolCallResult"]
        if fragment.get("model") and not merged.get("model"):
            merged["model"] = fragment["model"]
        stamp = fragment.get("timestamp")
        if isinstance(stamp, str) and stamp and (not merged.get("timestamp") or stamp > str(merged["timestamp"])):
            merged["timestamp"] = stamp
    merged["message"] = message
    return merged
