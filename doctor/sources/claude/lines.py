"""The lines of a Claude Code file, decoded only as far as `read_claude_file` uses them.

Most of a Claude file's bytes are copies the reader only measures (the
`toolUseResult` UI copy, `attachment` prompt snapshots, `progress` output) or
skips (`api-request*` copies). So each line is first walked once by the C
`rawjson.scan_records` (a mapped file's lines about CHUNK_BYTES at a time;
`scan_record` for one line), which checks every string as JSON.parse reads it,
measures the long ones and hands back a copy of the lines with those blanked to "".
A msgspec Struct declaring only the fields used decodes that short copy (one
`decode_lines` call a chunk; line by line when it refuses the chunk): the copies stay
`msgspec.Raw` and their text size (`text_chars`) comes from `raw_text_chars`
(the short strings counted in the copy, the blanked ones at their measured
length); only a user or assistant `message` is built, by orjson, from its own bytes
in the line (`rawjson.copy_span`), as the exact path builds it.

Exactness: the fast decode is used only where it gives what the exact path
(`jsonl.line_values`: orjson, the stdlib for its refusals) gives. A line that
`scan_record` refuses (invalid UTF-8 or string, a surrogate escape, a number with an
exponent or of 300 digits, deep nesting: where orjson would refuse the whole line
or msgspec and orjson part), that msgspec refuses (not an object, NaN, torn), whose
used fields have unusual types (a numeric `timestamp`) or read "" in a shortened copy (the
scan blanks a long string value wherever it is, a 300-character `cwd` too), whose copies hold a key
twice or an escaped key (`raw_text_chars`), or whose message orjson refuses, is
read by the exact path instead, whole. Without the C module every
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
from doctor.sources.claude_codex_common import raw_text_chars, text_chars
from doctor.sources.jsonl import Cursor, iter_line_chunks, iter_mapped_lines, line_values, over_cap_issue, read_only_map

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
    is_meta: object = None  # user records: isMeta (a reminder or expanded command, not typed)
    is_compact_summary: object = None  # user records: isCompactSummary
    line: tuple[int, int] | None = None  # the line's byte span, when it holds this record alone


def record_from_dict(record: dict) -> ClaudeRecord:
    """The exact path: a fully decoded record."""
    kind = record.get("type")
    line = ClaudeRecord(
        kind, record.get("uuid"), record.get("sessionId"), record.get("timestamp"), record.get("version"),
        record.get("cwd"), record.get("agentId"), record.get("isSidechain"), subtype=record.get("subtype"))
    if kind == "user" or kind == "assistant":
        line.message = record.get("message")
        if kind == "user":
            line.is_meta, line.is_compact_summary = record.get("isMeta"), record.get("isCompactSummary")
            if "toolUseResult" in record:
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
    isMeta: bool | None = None
    isCompactSummary: bool | None = None
    subtype: str | None = None
    message: msgspec.Raw = _ABSENT
    toolUseResult: msgspec.Raw = _ABSENT
    data: msgspec.Raw = _ABSENT
    attachment: msgspec.Raw = _ABSENT
    microcompactMetadata: msgspec.Raw = _ABSENT


_DECODE = msgspec.json.Decoder(_Line).decode
_DECODE_LINES = msgspec.json.Decoder(_Line | None).decode_lines
# String values this long (bytes, quotes included) are measured by the scan and blanked in the copy
# msgspec decodes; shorter ones cost less to skip than to cut out.
SHORTEN_FROM = 256
# A mapped file is read this many bytes of lines at a time: one C scan and one msgspec call for all.
CHUNK_BYTES = 1 << 22


def fast_record(line) -> ClaudeRecord | None:
    """The record on `line` (a buffer), or None when only the exact path may read it; IGNORED for a
    valid record of a type the reader does not use. One line at a time: a file that cannot be
    mapped, or a chunk of lines that msgspec refused as a whole."""
    scanned = rawjson.scan_record(line, 0, len(line), SHORTEN_FROM)
    if scanned is None:
        return None
    text, spans = scanned
    try:
        decoded = _DECODE(line if text is None else text)
    except (ValueError, RecursionError):  # msgspec: invalid, not an object, a field of another type, too deep
        return None
    return decoded_record(decoded, line, line if text is None else text, spans, 0)


def decoded_record(decoded: _Line, buffer, text, spans: tuple, begin: int) -> ClaudeRecord | None:
    """The record msgspec decoded from `text` (a scan copy with `spans`, whose position 0 is
    buffer[begin]), None when only the exact path may read the line, IGNORED when unused."""
    kind = decoded.type
    if kind not in USED_TYPES:
        return IGNORED
    record = ClaudeRecord(kind, decoded.uuid, decoded.sessionId, decoded.timestamp, decoded.version,
                          decoded.cwd, decoded.agentId, decoded.isSidechain, subtype=decoded.subtype)
    if spans and "" in (record.uuid, record.session_id, record.timestamp, record.version, record.cwd,
                        record.agent_id, record.subtype):
        return None  # the scan blanked a long one (a deep project's cwd), or it is "": only the exact path knows
    try:
        if kind == "user" or kind == "assistant":
            if decoded.message:
                record.message = orjson.loads(_in_line(decoded.message, buffer, text, spans, begin))
            if kind == "user":
                record.is_meta, record.is_compact_summary = decoded.isMeta, decoded.isCompactSummary
                if decoded.toolUseResult:
                    record.tool_use_result_chars = raw_text_chars(decoded.toolUseResult, text, spans)
        elif kind == "progress":
            record.copy_chars = raw_text_chars(decoded.data, text, spans)
        elif kind == "attachment":
            record.copy_chars = raw_text_chars(decoded.attachment, text, spans)
        elif kind == "system" and record.subtype == "microcompact_boundary" and decoded.microcompactMetadata:
            metadata = orjson.loads(_in_line(decoded.microcompactMetadata, buffer, text, spans, begin))
            record.compacted_ids = metadata.get("compactedToolIds") if isinstance(metadata, dict) else None
    except (ValueError, RecursionError):  # orjson's refusals; raw_text_chars's
        return None
    return record


def _in_line(raw: msgspec.Raw, buffer, text, spans: tuple, begin: int) -> memoryview:
    """The bytes of `buffer` that `raw`, decoded from the scan copy `text`, stands for."""
    if not spans:
        return memoryview(raw)
    start, end = rawjson.copy_span(raw, text, spans, begin)
    return buffer[start:end]


def iter_records(
    path: Path, issues: list[SourceIssue], cursor: Cursor, *, whole_lines_only: bool = False
) -> Iterator[tuple[int, ClaudeRecord]]:
    """(line number, record) of every object line of a USED_TYPES type from `cursor` on, advancing it
    past each newline-terminated line; lines that are not objects go to `issues` as the exact path says.
    `whole_lines_only`: stop before a last line without its newline (the agent may be writing it), so
    a resumed read takes it whole next time.
    """
    if rawjson.scan_records is None:  # without the C module the exact path is the faster one
        yield from _records_line_by_line(path, issues, cursor, whole_lines_only)
        return
    with read_only_map(path) as mapping:
        if mapping is None:  # a pipe
            yield from _records_line_by_line(path, issues, cursor, whole_lines_only)
            return
        buffer, view = mapping
        size, number = len(buffer), cursor.lines
        for begin, stop, readable in iter_line_chunks(buffer, cursor.offset, CHUNK_BYTES):
            if not readable:  # one line longer than LINE_CAP: measured, not read
                terminated = buffer[stop - 1] == 0x0A
                if whole_lines_only and not terminated:
                    return
                number += 1
                if terminated:
                    cursor.offset, cursor.lines = stop, number
                issues.append(over_cap_issue(path, number, stop - terminated - begin))
                continue
            text, spans, table = rawjson.scan_records(view, begin, stop, SHORTEN_FROM)
            rows = memoryview(table).cast("n")  # per line: where it ends, where it starts in text, its first span
            try:
                decoded = _DECODE_LINES(text)
            except (ValueError, RecursionError):  # a line msgspec refuses: each line on its own
                decoded = None
            for index in range(len(rows) // 3 - 1):
                row = 3 * index
                end = rows[row]
                if whole_lines_only and end == size:
                    return
                number += 1
                if end < size:
                    cursor.offset, cursor.lines = end + 1, number
                if decoded is None:
                    record = fast_record(view[begin:end])
                elif (line := decoded[index]) is None:
                    record = None
                elif line.type not in USED_TYPES:
                    record = IGNORED
                else:
                    line_spans = spans[rows[row + 2] : rows[row + 5]]
                    record = decoded_record(line, view, text, line_spans, begin - rows[row + 1])
                if record is None:
                    yield from _exact_records(path, number, buffer, view, begin, end, end < size, issues, begin)
                elif record is not IGNORED:
                    record.line = (begin, end)
                    yield number, record
                begin = end + 1


def _records_line_by_line(path: Path, issues: list[SourceIssue], cursor: Cursor,
                          whole_lines_only: bool) -> Iterator[tuple[int, ClaudeRecord]]:
    fast = rawjson.scan_record is not None
    number = cursor.lines
    for offset, buffer, view, begin, end, terminated in iter_mapped_lines(path, start=cursor.offset):
        if whole_lines_only and not terminated:
            break
        number += 1
        if terminated:
            cursor.offset, cursor.lines = offset + end - begin + 1, number
        if buffer is None:  # longer than LINE_CAP: measured, not read
            issues.append(over_cap_issue(path, number, end - begin))
            continue
        record = fast_record(view[begin:end]) if fast else None
        if record is None:
            yield from _exact_records(path, number, buffer, view, begin, end, terminated, issues, offset)
        elif record is not IGNORED:
            record.line = (offset, offset + end - begin)
            yield number, record


def _exact_records(path: Path, number: int, buffer, view: memoryview, begin: int, end: int, terminated: bool,
                   issues: list[SourceIssue], offset: int) -> Iterator[tuple[int, ClaudeRecord]]:
    """The exact path: the line decoded whole (`line_values`), its objects of a used type as records
    (with the line's byte span, from `offset`, when it holds one value)."""
    values = line_values(path, number, buffer, view, begin, end, terminated, issues)
    for value in values:
        if isinstance(value, dict):
            if isinstance(value.get("type"), str) and value["type"] in USED_TYPES:
                record = record_from_dict(value)
                if len(values) == 1:
                    record.line = (offset, offset + end - begin)
                yield number, record
        else:
            issues.append(SourceIssue(path, number, "record is not a JSON object; skipped"))
