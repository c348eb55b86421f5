"""The lines of a Codex rollout, as `read_rollout` takes them: (type, payload) envelopes.

Most of a rollout's bytes are `event_msg` copies of command output (an
`item_completed` CommandExecution's `aggregated_output`, `exec_command_end`'s
stdout): the reader only measures them. Such a line is walked once by the C
`rawjson.scan_record`, which checks every string as JSON.parse reads it, measures
the long ones and blanks them in a copy; msgspec decodes the event's fields from
that short copy, and `raw_text_chars` gives their lengths, so the output is never
built as a Python string. Every other line (and every event line without the C
module, or one `scan_record`, msgspec or `raw_text_chars` refuses) is decoded whole
(`jsonl.line_values`: orjson, the stdlib for its refusals), as the exact path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from doctor.core import rawjson
from doctor.core.context_window import window_tokens
from doctor.sources.base import SourceIssue
from doctor.sources.claude_codex_common import raw_text_chars, text_chars
from doctor.sources.dumps.dialects import RESPONSES_ITEM_TYPES
from doctor.sources.jsonl import iter_mapped_lines, line_values, over_cap_issue

COMMAND_OUTPUT_EVENT = "command output event"
PATCH_OUTPUT_EVENT = "patch output event"
MCP_RESULT_EVENT = "mcp result event"
# Not a copy: the event Codex writes for a prompt the person typed, right after its message item
# (`user_message`; 0.171 also an `item_completed` UserMessage, its own list of typed prompts, which
# leaves out the developer and environment messages). `read_rollout` counts the turns by it.
TYPED_PROMPT = "typed prompt"
# Not a copy either: a `token_count` event's `info.model_context_window`, the window Codex states for
# the model in use (`read_rollout` keeps the last).
CONTEXT_WINDOW = "context window"
COMMAND_OUTPUT_FIELDS = ("aggregated_output", "stdout", "stderr", "formatted_output")


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
    """The exact path: (side channel, chars) of the output an event copies, (TYPED_PROMPT, 0) for
    a typed prompt's event, or None."""
    kind = event.get("type")
    if kind == "exec_command_end":
        return COMMAND_OUTPUT_EVENT, _text_fields(event, COMMAND_OUTPUT_FIELDS)
    if kind == "user_message":
        return TYPED_PROMPT, 0
    if kind == "token_count":
        info = event.get("info")
        window = window_tokens(info.get("model_context_window")) if isinstance(info, dict) else None
        return (CONTEXT_WINDOW, window) if window is not None else None
    if kind == "item_completed":
        item = event.get("item")
        if isinstance(item, dict) and item.get("type") == "CommandExecution":
            return COMMAND_OUTPUT_EVENT, _text_fields(item, COMMAND_OUTPUT_FIELDS)
        if isinstance(item, dict) and item.get("type") == "UserMessage":
            return TYPED_PROMPT, 0
    elif kind == "patch_apply_end":
        return PATCH_OUTPUT_EVENT, _text_fields(event, ("stdout", "stderr"))
    elif kind == "mcp_tool_call_end":
        return MCP_RESULT_EVENT, text_chars(event.get("result"))
    return None


def _text_fields(holder: dict, names: tuple[str, ...]) -> int:
    return sum(text_chars(holder[name]) for name in names if isinstance(holder.get(name), str))


class _Item(msgspec.Struct):
    type: object = None
    aggregated_output: msgspec.Raw = msgspec.Raw()
    stdout: msgspec.Raw = msgspec.Raw()
    stderr: msgspec.Raw = msgspec.Raw()
    formatted_output: msgspec.Raw = msgspec.Raw()


class _Info(msgspec.Struct):
    model_context_window: object = None


class _Event(_Item):
    item: _Item | None = None
    result: msgspec.Raw = msgspec.Raw()
    info: _Info | None = None


class _EventLine(msgspec.Struct):
    type: object = None
    payload: _Event | None = None


_DECODE_EVENT = msgspec.json.Decoder(_EventLine).decode
# Where a line says it is an event: `{"timestamp":"…","type":"event_msg",` (only such lines are worth
# the scan; what the line really is, msgspec decides).
EVENT_MARK = b'"event_msg"'
MARK_WITHIN = 96
# String values this long (bytes, quotes included) are measured by the scan and blanked in the copy.
SHORTEN_FROM = 256
NO_COPY = ()  # fast_event: an event line whose event copies no output


def fast_event(line) -> tuple | None:
    """`event_copy` of the event on the `event_msg` line `line` (a buffer), NO_COPY when it copies no
    output, or None when only the exact path may read the line."""
    scanned = rawjson.scan_record(line, 0, len(line), SHORTEN_FROM)
    if scanned is None:
        return None
    text, spans = scanned
    if text is None:
        text = line
    try:
        decoded = _DECODE_EVENT(text)
        event = decoded.payload
        if decoded.type != "event_msg" or event is None:
            return None
        copy = _fast_copy(event, text, spans)
    except (ValueError, RecursionError):  # msgspec's refusals (a payload that is not an object among them)
        return None
    return NO_COPY if copy is None else copy


def _fast_copy(event: _Event, text, spans: tuple) -> tuple[str, int] | None:
    """`event_copy`, from the fields decoded from the scan copy `text`."""
    kind = event.type
    if kind == "exec_command_end":
        return COMMAND_OUTPUT_EVENT, _fast_text_fields(event, COMMAND_OUTPUT_FIELDS, text, spans)
    if kind == "user_message":
        return TYPED_PROMPT, 0
    if kind == "token_count":
        window = window_tokens(event.info.model_context_window) if event.info is not None else None
        return (CONTEXT_WINDOW, window) if window is not None else None
    if kind == "item_completed":
        item = event.item
        if item is not None and item.type == "CommandExecution":
            return COMMAND_OUTPUT_EVENT, _fast_text_fields(item, COMMAND_OUTPUT_FIELDS, text, spans)
        if item is not None and item.type == "UserMessage":
            return TYPED_PROMPT, 0
    elif kind == "patch_apply_end":
        return PATCH_OUTPUT_EVENT, _fast_text_fields(event, ("stdout", "stderr"), text, spans)
    elif kind == "mcp_tool_call_end":
        return MCP_RESULT_EVENT, raw_text_chars(event.result, text, spans)
    return None


def _fast_text_fields(holder: _Item, names: tuple[str, ...], text, spans: tuple) -> int:
    """`_text_fields`: the string fields among `names`, measured from the copy."""
    total = 0
    for name in names:
        raw = getattr(holder, name)
        if raw and memoryview(raw)[0] == 0x22:  # a string (msgspec keeps values raw without spaces around)
            total += raw_text_chars(raw, text, spans)
    return total


def iter_envelopes(path: Path, issues: list[SourceIssue]) -> Iterator[tuple[int, str | None, object, tuple | None]]:
    """(line number, record type, payload, line span) of every object line whose payload is an object;
    an event_msg payload is given as `event_copy` gives it. The span (the line's first and last byte
    offsets) is given when the line holds that one record alone, so that it can be decoded again.
    Lines that are not objects go to `issues`."""
    fast = rawjson.scan_record is not None  # without the C module every line is decoded whole
    number = 0
    for offset, buffer, view, begin, end, terminated in iter_mapped_lines(path):
        number += 1
        if buffer is None:  # longer than LINE_CAP: measured, not read
            issues.append(over_cap_issue(path, number, end - begin))
            continue
        if fast and buffer.find(EVENT_MARK, begin, min(end, begin + MARK_WITHIN)) >= 0:
            copy = fast_event(view[begin:end])
            if copy is not None:
                yield number, "event_msg", copy or None, None
                continue
        values = line_values(path, number, buffer, view, begin, end, terminated, issues)
        span = (offset, offset + end - begin) if len(values) == 1 else None
        for value in values:
            if not isinstance(value, dict):
                issues.append(SourceIssue(path, number, "record is not a JSON object; skipped"))
                continue
            kind, payload = envelope(value)
            if isinstance(payload, dict):
                yield number, kind, event_copy(payload) if kind == "event_msg" else payload, span
