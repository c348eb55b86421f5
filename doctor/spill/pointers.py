"""Every place a session says "the full output is over there", as one record type.

Pointers come from two sources. The analysis rows carry a parsed stub for each
result some layer bounded (`ResultMeasure.stub`); that is the model-visible pointer
and gives the result ordinal. The session file itself is then scanned for what the
history view does not keep: Claude's `toolUseResult.persistedOutputPath` and its
byte size, stubs in subagent transcripts (their spills land in the parent's
`tool-results/`), Gemini's masked copies and checkpoints, AutoBot anchors, and the
full stub text (the preview the audit compares with the file's head). The scan only
parses lines that mention a pointer (doctor.spill.marker_scan finds them), so a 1 GB
session costs one pass of substring tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from doctor.core.analysis import RetentionAnalysis
from doctor.core.parts import field as part_field
from doctor.core.result_table import function_response_of, raw_result_text
from doctor.core.sentinels import (
    BATCH_OFFLOAD,
    IN_TOOL_TRUNCATION,
    NONE,
    SENTINEL_PREFIXES,
    parse_stub,
    sentinel_kind,
    stub_preview_head,
)
from doctor.sources.autobot import ANCHOR_PREFIX, find_anchors
from doctor.sources.base import LoadedSession, SourceError
from doctor.sources.jsonl import loads, read_document
from doctor.spill.marker_scan import lines_mentioning_pointers

QWEN_TRUNCATION = "qwen-truncation"
QWEN_PERSISTED = "qwen-persisted"
QWEN_BATCH = "qwen-batch"
QWEN_BACKGROUND_SHELL = "qwen-background-shell"
CLAUDE_PERSISTED = "claude-persisted"
CLAUDE_MCP_SAVED = "claude-mcp-saved"
GEMINI_TOOL_OUTPUT = "gemini-tool-output"
AUTOBOT = "autobot"

POINTER_KINDS = (
    QWEN_TRUNCATION,
    QWEN_PERSISTED,
    QWEN_BATCH,
    QWEN_BACKGROUND_SHELL,
    CLAUDE_PERSISTED,
    CLAUDE_MCP_SAVED,
    GEMINI_TOOL_OUTPUT,
    AUTOBOT,
)

# Where a pointer was read: the model-visible result, or a copy the history view drops.
FROM_RESULT = "result"
FROM_TOOL_USE_RESULT = "toolUseResult"
FROM_RECORD = "record"
FROM_SUBAGENT = "subagent"

_CALL_ID_KEYS = ("tool_use_id", "callId", "call_id", "id")


@dataclass(frozen=True, slots=True)
class SpillPointer:
    """One pointer from a session to a spill file, as the session wrote it.

    `path` is the path exactly as written (absolute on the recording machine), or
    None when the agent wrote no file: Qwen's "(file too large to persist)" stub, a
    batch offload with no artifact, or an AutoBot anchor (found by hashing `anchor`).
    `preview_head` is the stub's copy of the file's first characters; it is payload,
    so it is never serialised.
    """

    agent: str
    kind: str
    path: str | None
    tool: str = ""
    call_id: str | None = None
    ordinal: int | None = None
    source: str = FROM_RESULT
    anchor: str | None = None
    artifact_name: str | None = None
    declared_bytes: int | None = None
    declared_kb: int | None = None
    declared_chars: int | None = None
    declared_lines: int | None = None
    sha256: str | None = None
    note: str | None = None
    preview_head: str | None = field(default=None, repr=False, compare=False)

    @property
    def written(self) -> str:
        """What the session names: the path, else the anchor, else the stub's note."""
        return self.path or self.anchor or self.note or "(no path)"

    def to_json(self) -> dict:
        return {
            "agent": self.agent,
            "kind": self.kind,
            "path": self.path,
            "anchor": self.anchor,
            "tool": self.tool,
            "callId": self.call_id,
            "ordinal": self.ordinal,
            "source": self.source,
            "declaredBytes": self.declared_bytes,
            "declaredKB": self.declared_kb,
            "declaredChars": self.declared_chars,
            "declaredLines": self.declared_lines,
            "sha256": self.sha256,
            "note": self.note,
        }


def pointer_kind(agent: str, layer: str, path: str | None) -> str:
    """Name the pointer form from the agent, the layer that bounded the result and the path layout."""
    agent = agent.lower()
    name = (path or "").replace("\\", "/").rsplit("/", 1)[-1]
    if "claude" in agent:
        return CLAUDE_MCP_SAVED if name.startswith("mcp-") else CLAUDE_PERSISTED
    if "gemini" in agent:
        return GEMINI_TOOL_OUTPUT
    if "/background-shells/" in (path or "").replace("\\", "/"):
        return QWEN_BACKGROUND_SHELL
    if layer == IN_TOOL_TRUNCATION:
        return QWEN_TRUNCATION
    if layer == BATCH_OFFLOAD:
        return QWEN_BATCH
    return QWEN_PERSISTED


def may_name_pointers(text: str) -> bool:
    """Whether `pointers_in_text` can find anything in `text`: a stub starts with a sentinel prefix
    (`sentinel_kind` is NONE for any other text) and an AutoBot anchor holds ANCHOR_PREFIX. The file
    scan tests every string of a record with this before the stub parser and the anchor regex."""
    return text.startswith(SENTINEL_PREFIXES) or ANCHOR_PREFIX in text


def pointers_in_text(agent: str, text: str, **context) -> list[SpillPointer]:
    """Pointers a single result text names (a stub's paths, or AutoBot anchors)."""
    if not may_name_pointers(text):
        return []
    layer = sentinel_kind(text)
    pointers = []
    if layer != NONE:
        stub = parse_stub(text)
        if stub is not None:
            preview = stub_preview_head(text)
            common = dict(
                context,
                agent=agent,
                declared_kb=stub.declared_kb,
                declared_chars=stub.declared_chars,
                declared_lines=stub.declared_lines,
                sha256=stub.sha256,
            )
            for index, path in enumerate(stub.paths):
                # Only a stub's first path is the file its preview copies.
                pointers.append(SpillPointer(kind=pointer_kind(agent, layer, path), path=path,
                                             preview_head=preview if index == 0 else None, **common))
            if not stub.paths and (stub.note or layer == BATCH_OFFLOAD):
                pointers.append(SpillPointer(kind=pointer_kind(agent, layer, None), path=None, note=stub.note, **common))
    anchors = find_anchors(text) if ANCHOR_PREFIX in text else ()  # the regex only where it can match
    for anchor in dict.fromkeys(a.text for a in anchors):
        pointers.append(SpillPointer(agent=agent, kind=AUTOBOT, path=None, anchor=anchor,
                                     artifact_name=find_anchors(anchor)[0].artifact_name, **context))
    return pointers


def pointers_for(session: LoadedSession, analysis: RetentionAnalysis | None) -> list[SpillPointer]:
    """All pointers of a session: model-visible ones in result order, then side-channel ones."""
    merged: dict[tuple, SpillPointer] = {}
    first_naming: dict[str, tuple] = {}  # a file's path or anchor -> the key of the first pointer to it in `merged`
    calls = _CallOrdinals(analysis)
    for row in analysis.with_stubs() if analysis is not None else ():
        for pointer in _pointers_of_stub(session.agent, row):
            key = _key(pointer)
            if key not in merged:
                _add(merged, first_naming, key, pointer)
    for pointer in _evidence(session):
        # A side-channel copy of a file already known only enriches that pointer, which reads neither the
        # copy's ordinal nor its tool, and the copy's key leaves its ordinal out (_key): so the ordinal of
        # its call is looked up only when it is added, or its key holds the ordinal.
        known = _known_copy(merged, first_naming, pointer)
        if known is None:
            pointer = calls.placed(pointer)
            known = merged.get(_key(pointer)) or _same_file(merged, first_naming, pointer)
        if known is None:
            _add(merged, first_naming, _key(pointer), pointer)
        else:
            merged[_key(known)] = _enrich(known, pointer)
    return sorted(merged.values(), key=lambda p: (p.ordinal is None, p.ordinal or 0))


class _CallOrdinals:
    """The ordinal and tool of the result answering a call, from the analysis, made when first asked."""

    def __init__(self, analysis: RetentionAnalysis | None) -> None:
        self._analysis = analysis
        self._of_call: dict[str, tuple[int, str]] | None = None

    def placed(self, pointer: SpillPointer) -> SpillPointer:
        """`pointer` with the ordinal (and, if it has none, the tool) of its call's result, when it lacks one."""
        if pointer.call_id is None or pointer.ordinal is not None or self._analysis is None:
            return pointer
        if self._of_call is None:
            self._of_call = self._analysis.calls()
        if pointer.call_id not in self._of_call:
            return pointer
        ordinal, tool = self._of_call[pointer.call_id]
        return replace(pointer, ordinal=ordinal, tool=pointer.tool or tool)


def _known_copy(merged: dict, first_naming: dict, pointer: SpillPointer) -> SpillPointer | None:
    """The known pointer a side-channel copy of a named file enriches, found without its ordinal (None:
    not known, or the copy is a model-visible result or names no file, whose key holds the ordinal)."""
    if pointer.source == FROM_RESULT or (pointer.path or pointer.anchor) is None:
        return None
    return merged.get(_key(pointer)) or _same_file(merged, first_naming, pointer)


def _add(merged: dict, first_naming: dict, key: tuple, pointer: SpillPointer) -> None:
    merged[key] = pointer
    target = pointer.path or pointer.anchor
    if target is not None:
        first_naming.setdefault(target, key)


def _pointers_of_stub(agent: str, row) -> list[SpillPointer]:
    stub = row.stub
    context = dict(
        agent=agent,
        tool=row.tool,
        call_id=row.call_id,
        ordinal=row.ordinal,
        declared_kb=stub.declared_kb,
        declared_chars=stub.declared_chars,
        declared_lines=stub.declared_lines,
        sha256=stub.sha256,
    )
    if stub.paths:
        return [SpillPointer(kind=pointer_kind(agent, row.sentinel, path), path=path, **context) for path in stub.paths]
    if stub.note or row.sentinel == BATCH_OFFLOAD:
        return [SpillPointer(kind=pointer_kind(agent, row.sentinel, None), path=None, note=stub.note, **context)]
    return []


def _key(pointer: SpillPointer) -> tuple:
    target = pointer.path or pointer.anchor
    if target is None:  # a stub with no file: one per result
        return (pointer.kind, pointer.ordinal, pointer.call_id)
    return (target, pointer.ordinal if pointer.source == FROM_RESULT else None)


def _same_file(merged: dict, first_naming: dict, pointer: SpillPointer) -> SpillPointer | None:
    """The model-visible pointer to the file a side-channel copy names, so the copy only enriches it:
    the first one in `merged` naming the same path or anchor (enriching never changes either)."""
    target = pointer.path or pointer.anchor
    if target is None:
        return next((p for p in merged.values() if p.path is None and p.anchor is None
                     and p.call_id == pointer.call_id and p.kind == pointer.kind), None)
    key = first_naming.get(target)
    return None if key is None else merged[key]


def _enrich(known: SpillPointer, seen: SpillPointer) -> SpillPointer:
    """Fill what the known pointer lacks from another sighting of the same file (`known` itself when
    the sighting adds nothing)."""
    filled = dict(
        declared_bytes=known.declared_bytes if known.declared_bytes is not None else seen.declared_bytes,
        preview_head=known.preview_head if known.preview_head is not None else seen.preview_head,
        sha256=known.sha256 or seen.sha256,
        declared_kb=known.declared_kb if known.declared_kb is not None else seen.declared_kb,
        call_id=known.call_id or seen.call_id,
    )
    if all(getattr(known, name) is value for name, value in filled.items()):
        return known
    return replace(known, **filled)


# -- the session file scan ---------------------------------------------------------


def _evidence(session: LoadedSession) -> Iterator[SpillPointer]:
    """Pointers and stub texts read from the recording (or, for a live host, its history)."""
    if session.path is None or not Path(session.path).is_file():
        yield from _history_evidence(session)
        return
    path = Path(session.path)
    yield from _file_evidence(session.agent, path, FROM_RECORD)
    for subagent in _subagent_files(path):
        yield from _file_evidence(session.agent, subagent, FROM_SUBAGENT)


def _history_evidence(session: LoadedSession) -> Iterator[SpillPointer]:
    """A live history has no file: read the stub texts from its Contents."""
    for content in session.history():
        for part in part_field(content, "parts") or ():
            fr = function_response_of(part)
            raw = raw_result_text(fr) if fr is not None else None
            if isinstance(raw, str):
                call_id = part_field(fr, "id")
                yield from pointers_in_text(session.agent, raw, call_id=call_id if isinstance(call_id, str) else None,
                                            tool=part_field(fr, "name") or "", source=FROM_RESULT)


def _subagent_files(path: Path) -> list[Path]:
    """Claude writes subagent transcripts to `<session stem>/subagents/`; their spills share our dir."""
    directory = path.with_suffix("") / "subagents"
    return sorted(directory.glob("*.jsonl")) if directory.is_dir() else []


def _file_evidence(agent: str, path: Path, source: str) -> Iterator[SpillPointer]:
    # The session's own file: its line count is remembered for `count_records` (a subagent's is not).
    for record in _records_mentioning_pointers(path, remember_count=source == FROM_RECORD):
        yield from _record_pointers(agent, record, source)


def _records_mentioning_pointers(path: Path, *, remember_count: bool = False) -> Iterator[object]:
    """Parsed records whose raw line mentions a pointer; a `.json` file is one (legacy Gemini) document."""
    try:
        if path.suffix == ".json":
            if any(lines_mentioning_pointers(path)):
                data = read_document(path)  # None past LINE_CAP: the reader reports it
                if data is not None:
                    yield loads(data)
            return
        for raw in lines_mentioning_pointers(path, remember_count=remember_count):
            try:
                yield loads(raw)
            except ValueError:
                continue  # the reader reports invalid lines; the scan only skips them
    except (SourceError, OSError, ValueError):
        return


def _record_pointers(agent: str, record: object, source: str) -> Iterator[SpillPointer]:
    yield from _walk(agent, record, _claude_call_id(record), source)


def _claude_call_id(record: object) -> str | None:
    """A Claude tool-result record names its call in `message.content[].tool_use_id`."""
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and isinstance(block.get("tool_use_id"), str):
            return block["tool_use_id"]
    return None


def _walk(agent: str, value: object, call_id: str | None, source: str) -> Iterator[SpillPointer]:
    """Every pointer in a JSON value; strings inherit the call id of their nearest enclosing object."""
    stack = [(value, call_id, source)]
    while stack:
        item, call, where = stack.pop()
        if isinstance(item, str):
            if may_name_pointers(item):  # most strings of a record are not stubs: no call for them
                yield from pointers_in_text(agent, item, call_id=call, source=where)
        elif isinstance(item, dict):
            for name in _CALL_ID_KEYS:
                named = item.get(name)
                if isinstance(named, str):
                    call = named
                    break
            persisted = item.get("persistedOutputPath")
            if isinstance(persisted, str):
                size = item.get("persistedOutputSize")
                yield SpillPointer(agent=agent, kind=pointer_kind(agent, NONE, persisted), path=persisted,
                                   call_id=call, source=FROM_TOOL_USE_RESULT,
                                   declared_bytes=size if isinstance(size, int) else None)
            for key, child in reversed(item.items()):
                if key != "persistedOutputPath":
                    stack.append((child, call, FROM_TOOL_USE_RESULT if key == "toolUseResult" else where))
        elif isinstance(item, list):
            stack.extend((child, call, where) for child in reversed(item))
