"""The lines of a Claude Code file, decoded only as far as `read_claude_file` uses them.

Most of a Claude file's bytes are copies the reader only measures (the
`toolUseResult` UI copy, `attachment` prompt snapshots, `progress` output) or
skips (`api-request*` copies). So a line is decoded by a msgspec Struct that
declares only the fields used: those copies stay `msgspec.Raw` and their text
size (`text_chars`) is counted from the raw JSON by `rawjson.text_units`; only a
user or assistant `message` is built, by orjson, as the exact path builds it.

Exactness: the fast decode is used only where it gives what the exact path
(`jsonl.line_values`: orjson, the stdlib for its refusals) gives. A line that is
not valid UTF-8 or holds a 309-digit number (`fast_decodable`), that msgspec
refuses (not an object, lone surrogate escapes, NaN, too deep, torn), whose used
fields have unusual types (a numeric `timestamp`), or whose message orjson
refuses, is read by the exact path instead, whole. Without the C module every
line is: checking and counting in Python costs more than a full orjson decode.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec
import orjson

from doctor.core import rawjson
from doctor.sources.base import SourceIssue
from doctor.sources.claude_codex_common import text_chars
from doctor.sources.jsonl import Cursor, iter_mapped_lines, line_values

# The record types read_claude_file takes something from; the others (api-request copies, cost and
# prompt bookkeeping) are only checked to be valid JSON objects.
USED_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
_ABSENT = msgspec.Raw()  # a present value has at least one byte, so an empty Raw means "no such key"


@dataclass(slots=True)
class ClaudeRecord:
    """What the reader takes from one record; the copies only as their text size."""

    kind: object
    uuid: object = None
    session_id: object = None
    timestamp: object = None
    version: object = None
    cwd: object = None
    agent_id: object = None
    is_sidechain: object = None
    message: object = None  # user and assistant records: the decoded message
    tool_use_result_chars: int | None = None  # user records: text_chars of toolUseResult; None without one
    copy_chars: int = 0  # progress records: text_chars of data; attachment records: of attachment
    subtype: object = None
    compacted_ids: object = None  # microcompact boundaries: microcompactMetadata.compactedToolIds


def record_from_dict(record: dict) -> ClaudeRecord:
    """The exact path: a fully decoded record."""
    kind = record.get("type")
    line = ClaudeRecord(
        kind, record.get("uuid"), record.get("sessionId"), record.get("timestamp"), record.get("version"),
        record.get("cwd"), record.get("agentId"), record.get("isSidechain"), subtype=record.get("subtype"))
    if kind == "user" or kind == "assistant":
        line.message = record.get("message")
        if kind == "user" and "toolUseResult" in record:
            line.tool_use_result_chars = text_chars(record["toolUseResult"])
    elif kind == "progress":
        line.copy_chars = text_chars(record.get("data"))
    elif kind == "attachment":
        line.copy_chars = text_chars(record.get("attachment"))
    elif kind == "system" and line.subtype == "microcompact_boundary":
        metadata = record.get("microcompactMetadata")
        line.compacted_ids = metadata.get("compactedToolIds") if isinstance(metadata, dict) else None
    return line


IGNORED = ClaudeRecord(None)


class _Line(msgspec.Struct):
    type: str | None = None
    uuid: str | None = None
    sessionId: str | None = None
    timestamp: str | None = None
    version: str | None = None
    cwd: str | None = None
    agentId: str | None = None
    isSidechain: bool | None = None
    subtype: str | None = None
    message: msgspec.Raw = _ABSENT
    toolUseResult: msgspec.Raw = _ABSENT
    data: msgspec.Raw = _ABSENT
    attachment: msgspec.Raw = _ABSENT
    microcompactMetadata: msgspec.Raw = _ABSENT


_DECODE = msgspec.json.Decoder(_Line).decode


def _raw_chars(raw: msgspec.Raw) -> int:
    """text_chars of the value `raw` holds (0 for an absent one)."""
    if not raw:
        return 0
    units = rawjson.text_units(raw)
    return text_chars(orjson.loads(memoryview(raw))) if units is None else units


def fast_record(line) -> ClaudeRecord | None:
    """The record on `line` (a buffer), or None when only the exact path may read it; IGNORED for a
    valid record of a type the reader does not use."""
    if not rawjson.fast_decodable(line):
        return None
    try:
        decoded = _DECODE(line)
        kind = decoded.type
        if kind not in USED_TYPES:
            return IGNORED
        record = ClaudeRecord(kind, decoded.uuid, decoded.sessionId, decoded.timestamp, decoded.version,
                              decoded.cwd, decoded.agentId, decoded.isSidechain, subtype=decoded.subtype)
        if kind == "user" or kind == "assistant":
            record.message = orjson.loads(memoryview(decoded.message)) if decoded.message else None
            if kind == "user" and decoded.toolUseResult:
                record.tool_use_result_chars = _raw_chars(decoded.toolUseResult)
        elif kind == "progress":
            record.copy_chars = _raw_chars(decoded.data)
        elif kind == "attachment":
            record.copy_chars = _raw_chars(decoded.attachment)
        elif kind == "system" and record.subtype == "microcompact_boundary" and decoded.microcompactMetadata:
            metadata = orjson.loads(memoryview(decoded.microcompactMetadata))
            record.compacted_ids = metadata.get("compactedToolIds") if isinstance(metadata, dict) else None
    except (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError, RecursionError):  # msgspec: too deep
        return None
    return record


def iter_records(
    path: Path, issues: list[SourceIssue], cursor: Cursor, *, whole_lines_only: bool = False
) -> Iterator[tuple[int, ClaudeRecord]]:
    """(line number, record) of every object line of a USED_TYPES type from `cursor` on, advancing it
    past each newline-terminated line; lines that are not objects go to `issues` as the exact path says.
    `whole_lines_only`: stop before a last line without its newline (the agent may be writing it), so
    a resumed read takes it whole next time.
    """
    fast = rawjson.text_units is not None  # without the C module the exact path is the faster one
    number = cursor.lines
    for offset, buffer, view, begin, end, terminated in iter_mapped_lines(path, start=cursor.offset):
        if whole_lines_only and not terminated:
            break
        number += 1
        if terminated:
            cursor.offset, cursor.lines = offset + end - begin + 1, number
        record = fast_record(view[begin:end]) if fast else None
        if record is not None:
            if record is not IGNORED:
                yield number, record
            continue
        for value in line_values(path, number, buffer, view, begin, end, terminated, issues):
            if isinstance(value, dict):
                if isinstance(value.get("type"), str) and value["type"] in USED_TYPES:
                    yield number, record_from_dict(value)
            else:
                issues.append(SourceIssue(path, number, "record is not a JSON object; skipped"))
