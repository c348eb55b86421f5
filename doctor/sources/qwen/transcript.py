"""Which records of a Qwen recording are the active conversation, without keeping their payloads.

`prepareTranscriptRecords` (chunk-JBUMBQAO.js) picks the leaf (the last
conversation record in file order), walks `parentUuid` from it over the first
record of each uuid, stops at a null parent, a missing parent (a gap: older
records are not reconnected) or a cycle, and merges the fragments of each
uuid. Qwen holds the whole file in memory to do this; a recording can be
gigabytes, so `TranscriptIndex` keeps only per-record metadata (uuid, parent,
byte offset, a kind code) in compact arrays, and `ChainRecords` re-reads just
the chain's lines when the history or the UI is built.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from orjson import loads as _orjson_loads

from doctor.core.jsvalues import MeasuredText, js_len, js_stringify_len, js_truthy
from doctor.core.rawjson import ShortenedLine, offset_in, scan_line, string_span, token_head
from doctor.core.sentinels import SENTINEL_PREFIXES
from doctor.sources.base import SideChannelCopy, SourceError, SourceIssue, restored_issue, stored_issue
from doctor.sources.jsonl import LINE_CAP, content_span, is_valid_utf8, iter_mapped_lines, opens_value, over_cap_issue
from doctor.sources.qwen.records import (
    FAST_ERRORS,
    INDEX_DECODER,
    SHELL_DISPLAY_DECODER,
    UI_RECORD_DECODER,
    UI_RESULT_DECODER,
    NON_CONVERSATION_SUBTYPES,
    RECORD_TYPES,
    history_record,
    identity_problem,
    normalized_message,
    display_chars_of,
    is_conversation_record,
    loads,
    merge_fragments,
    normalized_record,
    parse_line,
)

if TYPE_CHECKING:
    from doctor.core.stored import StoredIndex

NO_PARENT = -1
# Kind codes: what the history rebuild needs to know about a chain record without reading it.
MATERIAL = 0  # user / assistant / tool_result: may add a Content
SYSTEM_QUIET = 1  # system records the API history ignores (ui_telemetry, rewind, …)
SYSTEM_ACTIVE = 2  # slash_command, goal_turn_end, chat_compression without a usable payload
COMPRESSION = 3  # chat_compression with a truthy compressedHistory: replaces the history
_ACTIVE_SYSTEM_SUBTYPES = frozenset({"slash_command", "goal_turn_end", "chat_compression"})
_UI_SYSTEM_SUBTYPES = frozenset({"slash_command", "at_command", "rewind"})
_TYPE_NAMES = ("user", "assistant", "tool_result", "system")
# A tool output this long (its JSON token, in bytes) is measured from the file instead of decoded
# when the history is read for measuring only; the head read back for its sentinel test.
MEASURE_FROM_BYTES = 1024
# Pass 1 hands msgspec the line with its string values this long (in bytes) replaced by "":
# the accelerator has checked and measured them already (`scan_line`); at most MEASURE_FROM_BYTES.
SHORTEN_FROM = 256
_HEAD_BYTES = 512
_OUTPUT_KEY = b'"output":'
_TYPE_CODES = {name: code for code, name in enumerate(_TYPE_NAMES)}
USER_TYPE = _TYPE_CODES["user"]
_SYSTEM_TYPE = _TYPE_CODES["system"]


@dataclass(frozen=True, slots=True)
class ChainGap:
    """The walk stopped at a parent that no record defines."""

    child_uuid: str
    missing_parent_uuid: str


# TranscriptIndex's per-record columns and their array typecodes.
_COLUMNS = (("_parent", "q"), ("_offset", "q"), ("_length", "q"), ("_message_at", "q"), ("_message_length", "q"),
            ("_type", "b"), ("_output_at", "q"), ("_output_end", "q"), ("_output_units", "q"), ("_kind", "b"),
            ("_ui_kind", "b"))


@dataclass
class TranscriptIndex:
    """Pass 1 over the file: record metadata, the leaf and what was skipped."""

    path: Path
    issues: list[SourceIssue] = field(default_factory=list)
    ui_display: SideChannelCopy = field(default_factory=lambda: SideChannelCopy("ui-display"))
    first_record: dict | None = None
    session_ids: dict[str, int] = field(default_factory=dict)  # sessionId -> first line
    # Per uuid id (dense ints): first conversation fragment's parent id, line offset, position in line, kind.
    _ids: dict[str, int] = field(default_factory=dict)
    _uuids: list[str] = field(default_factory=list)
    _parent: array = field(default_factory=lambda: array("q"))
    _offset: array = field(default_factory=lambda: array("q"))
    _length: array = field(default_factory=lambda: array("q"))  # bytes of the first fragment's line
    # Where a plain material record's `message` value sits in its line (-1: read the whole line), its
    # length and the record type's code; its subtype when it has one.
    _message_at: array = field(default_factory=lambda: array("q"))
    _message_length: array = field(default_factory=lambda: array("q"))
    _type: array = field(default_factory=lambda: array("b"))
    # In such a record, its first `"output":` string when long: where the token starts and ends in the
    # message (-1: none) and its JS length, so measuring reads around it (`iter_history_records`).
    _output_at: array = field(default_factory=lambda: array("q"))
    _output_end: array = field(default_factory=lambda: array("q"))
    _output_units: array = field(default_factory=lambda: array("q"))
    _subtypes: dict[int, str] = field(default_factory=dict)
    _kind: array = field(default_factory=lambda: array("b"))
    _ui_kind: array = field(default_factory=lambda: array("b"))
    _position: dict[int, int] = field(default_factory=dict)  # records salvaged from a glued line
    _extra_fragments: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    leaf: int | None = None

    def stored(self) -> StoredIndex:
        from doctor.core.stored import StoredIndex

        return StoredIndex(
            [stored_issue(issue) for issue in self.issues],
            (self.ui_display.count, self.ui_display.chars), self.first_record, self.session_ids, self._uuids,
            [getattr(self, name).tobytes() for name, _ in _COLUMNS], self._subtypes, self._position,
            self._extra_fragments, self.leaf)

    @classmethod
    def from_stored(cls, path: Path, stored: StoredIndex) -> TranscriptIndex:
        """The index `stored` was made from. Raises ValueError when its parts disagree (a column of
        another length, an id beyond the uuids)."""
        records = len(stored.uuids)
        index = cls(path, [restored_issue(path, issue) for issue in stored.issues],
                    SideChannelCopy("ui-display", *stored.ui_display), stored.first_record, stored.session_ids,
                    {uuid: ident for ident, uuid in enumerate(stored.uuids)}, stored.uuids)
        if len(index._ids) != records or len(stored.columns) != len(_COLUMNS):
            raise ValueError("stored index uuids or columns disagree")
        for (name, typecode), data in zip(_COLUMNS, stored.columns):
            column = array(typecode)
            column.frombytes(data)
            if len(column) != records:
                raise ValueError(f"stored index column {name} holds {len(column)} entries for {records} records")
            setattr(index, name, column)
        ids = [*stored.subtypes, *stored.position, *stored.extra_fragments, *(() if stored.leaf is None else (stored.leaf,))]
        if (ids and not 0 <= min(ids) <= max(ids) < records) or (records and not NO_PARENT <= min(index._parent)
                                                                  <= max(index._parent) < records):
            raise ValueError("stored index names a record it does not hold")
        index._subtypes, index._position, index._extra_fragments = stored.subtypes, stored.position, stored.extra_fragments
        index.leaf = stored.leaf
        return index

    def _id(self, uuid: str) -> int:
        ident = self._ids.get(uuid)
        if ident is None:
            ident = len(self._uuids)
            self._ids[uuid] = ident
            self._uuids.append(uuid)
            self._parent.append(NO_PARENT)
            self._offset.append(-1)
            self._length.append(-1)
            self._message_at.append(-1)
            self._message_length.append(0)
            self._output_at.append(-1)
            self._output_end.append(-1)
            self._output_units.append(0)
            self._type.append(0)
            self._kind.append(MATERIAL)
            self._ui_kind.append(0)
        return ident

    def uuid(self, ident: int) -> str:
        return self._uuids[ident]

    def has_record(self, ident: int) -> bool:
        return self._offset[ident] >= 0

    def shown_in_ui(self, ident: int) -> bool:
        return bool(self._ui_kind[ident])

    def addresses(self, ident: int) -> list[tuple[int, int]]:
        """(line offset, position among the line's records) of each fragment, in file order."""
        first = (self._offset[ident], self._position.get(ident, 0))
        return [first, *self._extra_fragments.get(ident, ())]

    def add_fields(self, fields, number: int, offset: int, buffer, view: memoryview, begin: int, end: int,
                   shortened: ShortenedLine | None = None) -> bool:
        """`add` for a line that is one record, from its `IndexFields`; False when `add` must judge it.

        Only records `add` would take without comment come through here (identity
        valid, a string or absent subtype, a string or shell display); everything
        else returns False before touching the index, and the caller parses the
        line fully. `shortened`: the fields were decoded from that copy of the line,
        where a "" may stand for a long string (an identity field or subtype that is ""
        therefore goes to `add`).
        """
        uuid = fields.uuid
        session_id = fields.sessionId
        kind = fields.type
        subtype = fields.subtype
        if not uuid or not session_id or kind not in RECORD_TYPES or (subtype is not None and type(subtype) is not str):
            return False
        if shortened is not None and (subtype == "" or fields.parentUuid == ""):
            return False
        result = fields.toolCallResult
        payload = None
        try:
            chars = -1 if result is None else display_chars_of(result.resultDisplay, shortened)
            if chars is None:
                return False  # a structured display is measured as JSON, from the whole record
            if kind == "system" and subtype == "chat_compression" and fields.systemPayload:
                raw = fields.systemPayload  # rare: decoded only to test compressedHistory
                if shortened is not None:
                    start, stop = shortened.span(raw)
                    raw = buffer[start:stop]
                payload = loads(bytes(raw))
        except ValueError:
            return False
        if session_id not in self.session_ids:
            self.session_ids[session_id] = number
        if chars >= 0:
            self.ui_display.add(chars)
        if kind == "system":
            if subtype in NON_CONVERSATION_SUBTYPES:
                return True
            if subtype not in _ACTIVE_SYSTEM_SUBTYPES:
                code = SYSTEM_QUIET
            elif subtype == "chat_compression" and type(payload) is dict and js_truthy(payload.get("compressedHistory")):
                code = COMPRESSION
            else:
                code = SYSTEM_ACTIVE
            shown = subtype in _UI_SYSTEM_SUBTYPES
        else:
            code = MATERIAL
            shown = True
        length = end - begin
        message_at = message_length = output_at = output_end = -1
        units = 0
        raw_message = fields.message
        if code == MATERIAL and raw_message and not fields.goalContext:
            # Pass 2 will read only the message, so pass 1 notes where it is.
            if shortened is not None:
                at, stop = shortened.span(raw_message)
            else:
                at = _value_offset(raw_message, buffer, view, b'"message":', begin, end)
                stop = at + len(raw_message)
            if at >= 0:
                message_at = at - begin
                message_length = size = stop - at
                if kind == "tool_result" and size > MEASURE_FROM_BYTES:
                    output_at, output_end, units = _long_output(buffer, view, at, stop, shortened)
        ids = self._ids
        parent = fields.parentUuid
        ident = ids.get(uuid)
        parent_id = ids.get(parent, NO_PARENT) if parent else NO_PARENT
        self.leaf = ident
        if ident is None and (not parent or parent_id != NO_PARENT):
            # The usual record: a new uuid whose parent came before it.
            self.leaf = ident = len(self._uuids)
            ids[uuid] = ident
            self._uuids.append(uuid)
            self._parent.append(parent_id)
            self._offset.append(offset)
            self._length.append(length)
            self._message_at.append(message_at)
            self._message_length.append(message_length)
            self._output_at.append(output_at)
            self._output_end.append(output_end)
            self._output_units.append(units)
            self._type.append(_TYPE_CODES[kind])
            self._kind.append(code)
            self._ui_kind.append(shown)
            if subtype is not None and code == MATERIAL:  # pass 2 reads it for plain material records only
                self._subtypes[ident] = subtype
            return True
        if ident is None:
            self.leaf = ident = self._id(uuid)
        if parent:
            parent_id = self._id(parent)
        if self._offset[ident] >= 0:
            self._extra_fragments.setdefault(ident, []).append((offset, 0))
            if self._parent[ident] != parent_id:
                self.issues.append(
                    SourceIssue(self.path, number, "fragment of an earlier record names another parent (the first one wins)")
                )
            return True
        self._parent[ident] = parent_id
        self._offset[ident] = offset
        self._length[ident] = length
        self._message_at[ident] = message_at
        self._message_length[ident] = message_length
        self._output_at[ident] = output_at
        self._output_end[ident] = output_end
        self._output_units[ident] = units
        self._type[ident] = _TYPE_CODES[kind]
        self._kind[ident] = code
        self._ui_kind[ident] = shown
        if subtype is not None and code == MATERIAL:  # pass 2 reads it for plain material records only
            self._subtypes[ident] = subtype
        return True

    def add(self, value: dict, number: int, offset: int, position: int) -> None:
        problem = identity_problem(value)
        if problem is not None:
            self.issues.append(SourceIssue(self.path, number, f"record skipped as Qwen does: {problem}"))
            return
        self.session_ids.setdefault(value["sessionId"], number)
        self._count_display(value)
        if not is_conversation_record(value):
            return
        ident = self._id(value["uuid"])
        parent = value.get("parentUuid")
        parent_id = self._id(parent) if parent else NO_PARENT
        self.leaf = ident
        if self._offset[ident] >= 0:
            self._extra_fragments.setdefault(ident, []).append((offset, position))
            if self._parent[ident] != parent_id:
                self.issues.append(
                    SourceIssue(self.path, number, "fragment of an earlier record names another parent (the first one wins)")
                )
            return
        self._parent[ident] = parent_id
        self._offset[ident] = offset
        if position:
            self._position[ident] = position
        self._kind[ident] = _kind_of(value)
        self._ui_kind[ident] = value.get("type") != "system" or value.get("subtype") in _UI_SYSTEM_SUBTYPES
        kind = value.get("type")
        self._type[ident] = _TYPE_CODES.get(kind, _SYSTEM_TYPE) if isinstance(kind, str) else _SYSTEM_TYPE
        if value.get("subtype") is not None and self._kind[ident] == MATERIAL:
            self._subtypes[ident] = value["subtype"]  # read only where a record's type and subtype are counted

    def _count_display(self, value: dict) -> None:
        result = value.get("toolCallResult")
        if type(result) is not dict:
            return
        display = result.get("resultDisplay")
        if display is not None:
            self.ui_display.add(display_chars(display))

    def walk_chain(self) -> tuple[array, ChainGap | None, str | None]:
        """`walkTranscriptUuidChain` from the leaf: ids oldest first, the gap, the cycle's uuid."""
        chain = array("q")
        if self.leaf is None:
            return chain, None, None
        visited: set[int] = set()
        current = self.leaf
        gap = cycle = None
        while True:
            if current in visited:
                cycle = self._uuids[current]
                break
            visited.add(current)
            chain.append(current)
            parent = self._parent[current]
            if parent == NO_PARENT:
                break
            if not self.has_record(parent):
                gap = ChainGap(self._uuids[current], self._uuids[parent])
                break
            current = parent
        chain.reverse()
        return chain, gap, cycle


def _value_offset(raw, buffer, view: memoryview, key: bytes, begin: int, end: int) -> int:
    """Where `raw`, the value of top-level `key` msgspec decoded from `view[begin:end]`, starts in
    the buffer; -1 when that cannot be told.

    The accelerator knows it exactly (a Raw shares the line's memory); otherwise the first
    `key` counts when the bytes after it are the value (a same-named nested key fails this).
    """
    if offset_in is not None:
        return offset_in(raw, view)
    at = buffer.find(key, begin, end)
    if at < 0:
        return -1
    at += len(key)
    value = bytes(raw)
    return at if buffer.find(value, at, at + len(value)) == at else -1


def _long_output(buffer, view: memoryview, start: int, stop: int, shortened: ShortenedLine | None) -> tuple[int, int, int]:
    """(token start, token end, JS length) of the message's first long `"output":` string,
    relative to the message at `buffer[start:stop]`; (-1, -1, 0) when there is none.

    Whether it is the functionResponse's output is checked when the message is read
    (`ChainRecords.iter_history_records`): a same-named key elsewhere fails there.
    A `shortened` line has measured every long string already.
    """
    key = buffer.find(_OUTPUT_KEY, start, stop)
    if key < 0:
        return -1, -1, 0
    at = key + len(_OUTPUT_KEY)
    if stop - at < MEASURE_FROM_BYTES or view[at] != 0x22:
        return -1, -1, 0
    span = string_span(view, at, stop) if shortened is None else shortened.long_string_at(at)
    if span is None or span[0] - at < MEASURE_FROM_BYTES:
        return -1, -1, 0
    return at - start, span[0] - start, span[1]


def _measured_text(line: bytes, shortened: ShortenedLine, token) -> MeasuredText | None:
    """The string `scan_line` replaced by the "" `token` as a MeasuredText; None when the ""
    was real. Raises ValueError when its head cannot be decoded from the bytes."""
    units = shortened.units_at(token) if token else None
    if units is None:
        return None
    start = shortened.span(token)[0]
    head = token_head(line[start : start + _HEAD_BYTES])
    if head is None:
        raise ValueError("no head")
    return MeasuredText(head, units)


def _empty_strings(value: object) -> int:
    """How many "" values `value` holds (counting stops at 2): one means the spliced one."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        elif item == "":
            count += 1
            if count > 1:
                break
    return count


def display_chars(display: object) -> int:
    """Chars of output a `resultDisplay` keeps: a string, a shell result's `text` and `output`
    (the two copies it holds), else the JSON length of a structured display (diffs, todo lists)."""
    if isinstance(display, str):
        return js_len(display)
    if type(display) is dict and display.get("type") == "shell_result":
        return sum(js_len(display[key]) for key in ("text", "output") if isinstance(display.get(key), str))
    return js_stringify_len(display) or 0


def _kind_of(value: dict) -> int:
    if value.get("type") != "system":
        return MATERIAL
    subtype = value.get("subtype")
    if subtype not in _ACTIVE_SYSTEM_SUBTYPES:
        return SYSTEM_QUIET
    payload = value.get("systemPayload")
    if subtype == "chat_compression" and type(payload) is dict and js_truthy(payload.get("compressedHistory")):
        return COMPRESSION
    return SYSTEM_ACTIVE


def build_index(path: Path) -> TranscriptIndex:
    """Pass 1: every line parsed once, nothing but metadata kept."""
    index = TranscriptIndex(path)
    extend_index(index)
    return index


def extend_index(index: TranscriptIndex, start: int = 0, lines_before: int = 0, *, whole_lines_only: bool = False):
    """Index the lines from byte `start` (line `lines_before` + 1) on; return (end offset, lines read).

    `doctor memory --follow` calls it again from where it stopped when the agent
    appends. With `whole_lines_only` a last line without its newline (the agent
    is mid-write) is left for the next call instead of being reported torn.
    """
    path = index.path
    end, lines = start, lines_before
    decode = INDEX_DECODER.decode
    add_fields = index.add_fields
    scan = scan_line
    number = lines_before
    for offset, buffer, view, begin, stop, terminated in iter_mapped_lines(path, start=start):
        if whole_lines_only and not terminated:
            break
        number += 1
        end, lines = offset + stop - begin + terminated, number
        if buffer is None:  # longer than LINE_CAP: measured, not read
            index.issues.append(over_cap_issue(path, number, stop - begin))
            continue
        scanned = scan(view, begin, stop, SHORTEN_FROM) if index.first_record is not None else None
        if scanned is not None:
            # The fast path: a line that is one record, decoded field by field (its long strings,
            # checked and measured by the scan, replaced by "" when the accelerator is there).
            text, spans = scanned
            shortened = None if text is None else ShortenedLine(text, spans, begin)
            try:
                fields = decode(view[begin:stop] if text is None else text)
            except FAST_ERRORS:
                pass
            else:
                if add_fields(fields, number, offset, buffer, view, begin, stop, shortened):
                    continue
        _index_line(index, buffer, begin, stop, number, offset, terminated)
    return end, lines


def _index_line(index: TranscriptIndex, buffer, begin: int, stop: int, number: int, offset: int, terminated: bool) -> None:
    """The full path for one line (`buffer[begin:stop]`): every object `parse_line` finds, and what was
    wrong with it. A line no value opens and with no "{" to salvage an object from (a crash's NUL
    bytes) is reported as parse_line would, without copying it."""
    path = index.path
    first, last = content_span(buffer, begin, stop)
    if first == last:
        return
    if not opens_value(buffer[first]) and buffer.find(b"{", first, last) < 0:
        index.issues.append(_line_issue(path, number, "invalid JSON", terminated, 0, last - first))
        return
    stripped = buffer[first:last]
    values, problem = parse_line(stripped)
    if problem is not None:
        index.issues.append(_line_issue(path, number, problem, terminated, len(values), len(stripped)))
    if values and not is_valid_utf8(stripped):
        index.issues.append(SourceIssue(path, number, "invalid UTF-8 bytes shown as U+FFFD", "note"))
    for position, value in enumerate(values):
        if index.first_record is None:
            index.first_record = value
        index.add(value, number, offset, position)


def _line_issue(path: Path, number: int, problem: str, terminated: bool, salvaged: int, size: int) -> SourceIssue:
    if problem == "recovered":
        return SourceIssue(path, number, f"malformed line: {salvaged} record(s) recovered from it as Qwen does")
    if problem == "invalid JSON" and not terminated:
        return SourceIssue(path, number, "incomplete last record (the file may still be being written); ignored", "note")
    if problem == "invalid JSON":
        return SourceIssue(path, number, f"invalid JSON line ({size:,} bytes) skipped")
    if problem == "too deep":
        return SourceIssue(path, number, f"invalid JSON line ({size:,} bytes) skipped: nested too deeply to decode")
    return SourceIssue(path, number, "line holds a JSON value that is not an object; skipped as Qwen does")


def loads_message(data: bytes) -> dict | None:
    return normalized_message(_orjson_loads(data))


class ChainRecords:
    """Re-reads the chain's records (fragments merged) from the file, one at a time."""

    def __init__(self, index: TranscriptIndex, chain: array):
        self.index = index
        self.chain = chain

    def __len__(self) -> int:
        return len(self.chain)

    def iter_records(self, start: int = 0, *, skip=None, measured: bool = False) -> Iterator[tuple[int, dict | None]]:
        """(id, merged record) for chain positions from `start`; None for ids `skip(id)` accepts.

        Skipped ids are not read, which is how the history rebuild avoids
        parsing the telemetry records it would ignore anyway. `measured`: for the
        UI history's measuring only, a tool_result record is just its type and
        `toolCallResult`, long display strings as MeasuredText (`_measured_tool_result`).
        """
        tool_result = _TYPE_CODES["tool_result"]
        types = self.index._type
        with self._reopen() as handle:
            fd = handle.fileno()
            for position in range(start, len(self.chain)):
                ident = self.chain[position]
                if skip is not None and skip(ident):
                    yield ident, None
                    continue
                if measured and types[ident] == tool_result:
                    record = self._measured_tool_result(fd, ident)
                    if record is not None:
                        yield ident, record
                        continue
                yield ident, self._merged(handle, ident)

    def _measured_tool_result(self, fd: int, ident: int) -> dict | None:
        """{type, toolCallResult} of a one-record tool_result line, its display's long strings
        (a string display, a shell result's text and output) as MeasuredText; None to read it whole.

        The line is shortened by `scan_line` and only `toolCallResult` is decoded. Every string
        the scan replaced inside it must be one of those display strings, else (a long callId,
        an error text) the record is read whole.
        """
        index = self.index
        length = index._length[ident]
        if length < 0 or ident in index._extra_fragments or ident in index._position:
            return None
        line = os.pread(fd, length, index._offset[ident])
        scanned = scan_line(line, 0, len(line), SHORTEN_FROM)
        if scanned is None or scanned[0] is None:
            return None
        shortened = ShortenedLine(scanned[0], scanned[1], 0)
        try:
            fields = UI_RECORD_DECODER.decode(shortened.text)
            raw = fields.toolCallResult
            if fields.type != "tool_result" or not raw or memoryview(raw)[0] != 0x7B:
                return None
            result = _orjson_loads(memoryview(raw))
            display_raw = UI_RESULT_DECODER.decode(raw).resultDisplay
            display = result.get("resultDisplay")
            replaced = 0
            if display == "":
                texts = {None: display_raw}
            elif type(display) is dict and (display.get("text") == "" or display.get("output") == ""):
                shell = SHELL_DISPLAY_DECODER.decode(display_raw)
                texts = {key: getattr(shell, key) for key in ("text", "output") if display.get(key) == ""}
            else:
                texts = {}
            for key, token in texts.items():
                text = _measured_text(line, shortened, token)
                if text is None:
                    continue  # a real ""
                if key is None:
                    result["resultDisplay"] = text
                else:
                    display[key] = text
                replaced += 1
        except FAST_ERRORS:
            return None
        start, stop = shortened.span(raw)
        if replaced != sum(1 for _, begin, _, _ in shortened.spans if start <= begin < stop):
            return None
        return {"type": "tool_result", "toolCallResult": result}

    def iter_history_records(self, start: int, skip_kind: int, *, measured: bool = False,
                             positions: Iterable[int] | None = None) -> Iterator[tuple[int, dict]]:
        """(id, record) for chain positions from `start` (or at `positions`) whose kind is not `skip_kind`.

        The records carry only what the API history reads (type, subtype,
        message, systemPayload, goalContext): a one-record line is read at its
        known length and decoded without its `toolCallResult` (the UI copy of
        the output, most of a tool_result line). Anything else (fragments, a
        glued line, a line msgspec refuses) goes through `iter_records`'s path.

        `measured`: for the retention analysis only. A long tool output that pass 1
        found and counted is not read: the message is decoded around it and the
        output becomes a MeasuredText (its head and JS length). An output whose
        head is a sentinel header, or a message where that span is not the
        functionResponse's output, is decoded whole as usual.
        """
        index = self.index
        kinds, offsets, lengths = index._kind, index._offset, index._length
        extra, glued = index._extra_fragments, index._position
        chain = self.chain
        with self._reopen() as handle:
            fd = handle.fileno()
            pread = os.pread
            message_at, message_length = index._message_at, index._message_length
            output_at = index._output_at
            types, subtypes = index._type, index._subtypes
            for position in range(start, len(chain)) if positions is None else positions:
                ident = chain[position]
                if kinds[ident] == skip_kind:
                    continue
                at = message_at[ident]
                if at >= 0 and ident not in extra:
                    if measured and output_at[ident] >= 0:
                        message = self._measured_message(fd, ident, offsets[ident] + at)
                        if message is not None:
                            yield ident, {"type": _TYPE_NAMES[types[ident]], "subtype": subtypes.get(ident), "message": message}
                            continue
                    try:
                        message = loads_message(pread(fd, message_length[ident], offsets[ident] + at))
                    except ValueError:
                        pass
                    else:
                        yield ident, {"type": _TYPE_NAMES[types[ident]], "subtype": subtypes.get(ident), "message": message}
                        continue
                length = lengths[ident]
                if length >= 0 and ident not in extra and ident not in glued:
                    try:
                        yield ident, history_record(pread(fd, length, offsets[ident]))
                        continue
                    except FAST_ERRORS:
                        pass
                yield ident, self._merged(handle, ident)

    def _measured_message(self, fd: int, ident: int, start: int) -> dict | None:
        """The message with its long output as a MeasuredText, or None to decode it whole."""
        index = self.index
        at, end = index._output_at[ident], index._output_end[ident]
        before = os.pread(fd, at + _HEAD_BYTES, start)
        head = token_head(before[at:])
        if head is None or head.startswith(SENTINEL_PREFIXES):
            return None
        after = os.pread(fd, index._message_length[ident] - end, start + end)
        try:
            message = loads_message(before[:at] + b'""' + after)
        except ValueError:
            return None
        parts = message.get("parts") if message is not None else None
        if not parts or len(parts) != 1 or type(parts[0]) is not dict:
            return None
        response = parts[0].get("functionResponse")
        response = response.get("response") if type(response) is dict else None
        if type(response) is not dict or response.get("output") != "" or _empty_strings(message) != 1:
            return None  # the span may have been another key's value
        response["output"] = MeasuredText(head, index._output_units[ident])
        return message

    def _reopen(self) -> BinaryIO:
        try:
            return open(self.index.path, "rb")
        except OSError as exc:
            raise SourceError(self.index.path, f"cannot re-read: {exc.strerror or exc}") from None

    def _merged(self, handle, ident: int) -> dict:
        fragments = [self._read(handle, offset, slot) for offset, slot in self.index.addresses(ident)]
        return merge_fragments([f for f in fragments if f is not None])

    def _read(self, handle, offset: int, slot: int) -> dict | None:
        handle.seek(offset)
        values, _ = parse_line(handle.readline(LINE_CAP + 1).strip())  # the line indexed was at most that
        if slot >= len(values):
            raise SourceError(self.index.path, "changed while being read (a record moved)")
        return normalized_record(values[slot])
