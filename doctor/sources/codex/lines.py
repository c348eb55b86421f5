"""The lines of a Codex rollout, as `read_rollout` takes them: (type, payload) envelopes.

Every line is decoded whole (`jsonl.line_values`: orjson, the stdlib for its
refusals) from a read-only map of the file. A typed msgspec decode that kept the
event_msg output copies raw and counted them from the bytes (as the Claude
reader does) was measured slower here: those copies are single long strings,
which orjson builds in one pass, while msgspec's skip, the UTF-8 check and the
count take three (benchmarks/RESULTS-codex-reader.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from doctor.sources.base import SourceIssue
from doctor.sources.claude_codex_common import text_chars
from doctor.sources.dumps.dialects import RESPONSES_ITEM_TYPES
from doctor.sources.jsonl import iter_mapped_lines, line_values

COMMAND_OUTPUT_EVENT = "command output event"
PATCH_OUTPUT_EVENT = "patch output event"
MCP_RESULT_EVENT = "mcp result event"
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


def iter_envelopes(path: Path, issues: list[SourceIssue]) -> Iterator[tuple[int, str | None, object]]:
    """(line number, record type, payload) of every object line whose payload is an object; an
    event_msg payload is given as `event_copy` gives it. Lines that are not objects go to `issues`."""
    number = 0
    for _, buffer, view, begin, end, terminated in iter_mapped_lines(path):
        number += 1
        for value in line_values(path, number, buffer, view, begin, end, terminated, issues):
            if not isinstance(value, dict):
                issues.append(SourceIssue(path, number, "record is not a JSON object; skipped"))
                continue
            kind, payload = envelope(value)
            if isinstance(payload, dict):
                yield number, kind, event_copy(payload) if kind == "event_msg" else payload
