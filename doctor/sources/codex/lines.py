"""The lines of a Codex rollout, decoded only as far as `read_rollout` uses them.

Most of a rollout's bytes are `event_msg` copies of command output the reader
only measures (`item_completed` CommandExecution, `exec_command_end`, …). So an
enveloped line is decoded by a msgspec Struct that keeps its payload raw; an
event payload is decoded by another that keeps the output fields raw, and their
JS lengths are counted from the JSON tokens (`rawjson.string_units`,
`rawjson.text_units`); every other payload the reader uses is built by orjson,
as the exact path builds it.

Exactness: as for Claude Code (doctor/sources/claude/lines.py), a line is read
by the exact path (`jsonl.line_values`, then `envelope`) whenever the fast decode
could differ: not valid UTF-8 or a 309-digit number (`fast_decodable`), refused
by msgspec, not an envelope with a string `type`, fields of unusual types, a
payload orjson refuses; and every line is, without the C module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import orjson

from doctor.core import rawjson
from doctor.sources.base import SourceIssue
from doctor.sources.claude_codex_common import text_chars
from doctor.sources.dumps.dialects import RESPONSES_ITEM_TYPES
from doctor.sources.jsonl import iter_mapped_lines, line_values

COMMAND_OUTPUT_EVENT = "command output event"
PATCH_OUTPUT_EVENT = "patch output event"
MCP_RESULT_EVENT = "mcp result event"
COMMAND_OUTPUT_FIELDS = ("aggregated_output", "stdout", "stderr", "formatted_output")
# Envelope types whose payload the reader builds; event_msg payloads are measured, the rest skipped.
BUILT_TYPES = frozenset({"response_item", "compacted", "turn_context", "session_meta", "legacy_meta"})
_ABSENT = msgspec.Raw()
_QUOTE, _BRACE = 0x22, 0x7B


def envelope(record: dict) -> tuple[str | None, object]:
    """(record type, payload) of an enveloped or a legacy bare line."""
    if "payload" in record and isinstance(record.get("type"), str):
        return record["type"], record["payload"]
    if "record_type" in record:
        return "state", record
    if isinstance(record.get("type"), str) and record["type"] in RESPONSES_ITEM_TYPES:
        return "response_item", record
    if "type" not in record and "id" in record and "timestamp" in record:
        return "legacy_meta", record
    return None, record


def event_copy(event: dict) -> tuple[str, int] | None:
    """The exact path: (side channel, chars) of the output an event copies, or None."""
    kind = event.get("type")
    if kind == "exec_command_end":
        return COMMAND_OUTPUT_EVENT, _text_fields(event, COMMAND_OUTPUT_FIELDS)
    if kind == "item_completed":
        item = event.get("item")
        if isinstance(item, dict) and item.get("type") == "CommandExecution":
            return COMMAND_OUTPUT_EVENT, _text_fields(item, COMMAND_OUTPUT_FIELDS)
    elif kind == "patch_apply_end":
        return PATCH_OUTPUT_EVENT, _text_fields(event, ("stdout", "stderr"))
    elif kind == "mcp_tool_call_end":
        return MCP_RESULT_EVENT, text_chars(event.get("result"))
    return None


def _text_fields(holder: dict, names: tuple[str, ...]) -> int:
    return sum(text_chars(holder[name]) for name in names if isinstance(holder.get(name), str))


class _Envelope(msgspec.Struct):
    type: str | None = None
    payload: msgspec.Raw = _ABSENT


class _Outputs(msgspec.Struct):
    type: str | None = None
    aggregated_output: msgspec.Raw = _ABSENT
    stdout: msgspec.Raw = _ABSENT
    stderr: msgspec.Raw = _ABSENT
    formatted_output: msgspec.Raw = _ABSENT


class _Event(_Outputs):
    item: msgspec.Raw = _ABSENT
    result: msgspec.Raw = _ABSENT


class _EventEnvelope(msgspec.Struct):
    """An event line decoded in one pass (most of a rollout's bytes are in these)."""

    type: str | None = None
    payload: _Event | None | msgspec.UnsetType = msgspec.UNSET


_ENVELOPE = msgspec.json.Decoder(_Envelope).decode
_EVENT_ENVELOPE = msgspec.json.Decoder(_EventEnvelope).decode
_EVENT = msgspec.json.Decoder(_Event).decode
_EVENT_TYPE = b'"type":"event_msg"'
_PREFIX = 128  # Codex writes the envelope's timestamp, ordinal and type before the payload
_ITEM = msgspec.json.Decoder(_Outputs).decode


def _string_chars(raw: msgspec.Raw) -> int:
    """JS length of a raw string value; 0 for any other value (it is not counted), or an absent one."""
    if not raw or memoryview(raw)[0] != _QUOTE:
        return 0
    units = rawjson.string_units(raw)
    if units is None:
        raise ValueError("not a string token")
    return units


def _fields(outputs: _Outputs, command: bool) -> int:
    total = _string_chars(outputs.stdout) + _string_chars(outputs.stderr)
    if command:
        total += _string_chars(outputs.aggregated_output) + _string_chars(outputs.formatted_output)
    return total


def _fast_event(event: _Event) -> tuple[str, int] | None:
    kind = event.type
    if kind == "exec_command_end":
        return COMMAND_OUTPUT_EVENT, _fields(event, True)
    if kind == "item_completed":
        if event.item and memoryview(event.item)[0] == _BRACE:
            item = _ITEM(event.item)
            if item.type == "CommandExecution":
                return COMMAND_OUTPUT_EVENT, _fields(item, True)
    elif kind == "patch_apply_end":
        return PATCH_OUTPUT_EVENT, _fields(event, False)
    elif kind == "mcp_tool_call_end":
        units = rawjson.text_units(event.result) if event.result else 0
        if units is None:
            raise ValueError("not a JSON value")
        return MCP_RESULT_EVENT, units
    return None


_SKIPPED = object()  # a valid line the reader takes nothing from


def fast_line(line):
    """(type, payload) of an enveloped line, the payload built (or, for event_msg, measured: an
    event_copy result); _SKIPPED; or None when only the exact path may read it."""
    if not rawjson.fast_decodable(line):
        return None
    try:
        if _EVENT_TYPE in bytes(line[:_PREFIX]):
            decoded = _EVENT_ENVELOPE(line)  # the decoded type decides, not the bytes looked at
            if decoded.type == "event_msg" and decoded.payload is not msgspec.UNSET:
                return _SKIPPED if decoded.payload is None else ("event_msg", _fast_event(decoded.payload))
        decoded = _ENVELOPE(line)
        kind, payload = decoded.type, decoded.payload
        if kind is None or not payload:
            return None  # legacy bare lines, and envelopes without a string type
        if memoryview(payload)[0] != _BRACE:
            return _SKIPPED  # the reader skips a payload that is not an object
        if kind == "event_msg":
            return kind, _fast_event(_EVENT(payload))
        if kind in BUILT_TYPES:
            return kind, orjson.loads(memoryview(payload))
    except (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError, ValueError, RecursionError):
        return None  # RecursionError: msgspec on values nested too deep
    return _SKIPPED


def iter_envelopes(path: Path, issues: list[SourceIssue]) -> Iterator[tuple[int, str | None, object]]:
    """(line number, record type, payload) of every object line whose payload is an object; an
    event_msg payload is given as `event_copy` gives it. Lines that are not objects go to `issues`."""
    fast = rawjson.text_units is not None  # without the C module the exact path is the faster one
    number = 0
    for _, buffer, view, begin, end, terminated in iter_mapped_lines(path):
        number += 1
        read = fast_line(view[begin:end]) if fast else None
        if read is not None:
            if read is not _SKIPPED:
                yield number, read[0], read[1]
            continue
        for value in line_values(path, number, buffer, view, begin, end, terminated, issues):
            if not isinstance(value, dict):
                issues.append(SourceIssue(path, number, "record is not a JSON object; skipped"))
                continue
            kind, payload = envelope(value)
            if isinstance(payload, dict):
                yield number, kind, event_copy(payload) if kind == "event_msg" else payload
