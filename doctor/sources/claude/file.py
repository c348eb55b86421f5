"""One Claude Code `.jsonl` file, read in a single streaming pass.

Model context: `user` and `assistant` records of the file's own thread, in file
order, rebuilt by `ClaudeThread`. Everything else is counted, never added to the
history: `toolUseResult` (the UI's copy of a result, often the full output after
a spill), `progress` records (bash output, subagent messages with their tool
results, hook output) and `attachment` records (environment, prompt snapshots,
reminders: none carries a tool result) as side-channel copies; `isSidechain`
records inside a main file (Claude Code ≤ 1.0.x subagents) as a thread of their
own. A record whose `uuid` was already read is a duplicate (Claude Code's loader
keys messages by uuid) and is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from doctor.sources.base import SideChannelCopy, SourceIssue
from doctor.core.sentinels import SENTINEL_PREFIXES
from doctor.sources.claude.blocks import assistant_parts, tool_result_text, user_parts
from doctor.sources.claude.lines import ClaudeRecord, iter_records
from doctor.sources.claude_codex_common import CallNames, result_text, side_copy
from doctor.sources.claude.spill import is_persisted_stub, persisted_output, spill_roots
from doctor.sources.claude.thread import ClaudeThread
from doctor.sources.jsonl import Cursor
from doctor.sources.measured_outputs import MeasuredOutputs

# Results this long (characters) are kept measured, with a head of HEAD_CHARS (every sentinel prefix is shorter).
MEASURE_FROM = 1024
HEAD_CHARS = 256
TOOL_USE_RESULT = "toolUseResult"
PROGRESS = "progress"
ATTACHMENT = "attachment"


@dataclass
class ClaudeFile:
    """What one file holds: its thread, an inline sidechain if any, and the copies beside them."""

    path: Path
    thread: ClaudeThread = field(default_factory=ClaudeThread)
    sidechain: ClaudeThread = field(default_factory=ClaudeThread)
    names: CallNames = field(default_factory=CallNames)
    side_channel: dict[str, SideChannelCopy] = field(default_factory=dict)
    issues: list[SourceIssue] = field(default_factory=list)
    session_id: str | None = None
    agent_id: str | None = None
    started: str | None = None
    version: str | None = None
    cwd: str | None = None  # the project the session ran in: its .claude/settings*.json apply
    is_sidechain_file: bool | None = None
    stubs: list = field(default_factory=list)  # (functionResponse, stub text, compact boundaries before it)
    outputs: MeasuredOutputs | None = None  # long results kept measured, when the file can be read again

    def side(self, kind: str) -> SideChannelCopy:
        return side_copy(self.side_channel, kind)

    def persisted_outputs(self) -> list[dict]:
        roots = spill_roots(self.path)
        rows = []
        for fr, text, boundaries in self.stubs:
            row = persisted_output(fr.get("id"), fr["name"], text, roots)
            row["in_context"] = boundaries == self.thread.boundaries
            rows.append(row)
        return rows


def read_claude_file(path: Path) -> ClaudeFile:
    """Read `path` (never writing to it) into a ClaudeFile."""
    reader = ClaudeFileReader(path)
    reader.feed()
    return reader.finish()


class ClaudeFileReader:
    """The single pass, resumable: `feed` reads on from where the last `feed` stopped.

    `doctor statusline` keeps one of these (`claude.stored`) per transcript and feeds it only the lines
    appended since, so its state is everything the pass needs to go on: the file so far, the
    uuids and result lines seen, and the cursor. `finish` names results whose call came later
    and must be the last call: it changes the file it returns.
    """

    def __init__(self, path: Path):
        self.file = ClaudeFile(path, outputs=MeasuredOutputs(path, _result_in_record) if path.is_file() else None)
        self.cursor = Cursor()
        self._seen_uuids: set[str] = set()
        self._result_lines: dict[str, int] = {}

    def feed(self, *, whole_lines_only: bool = False) -> None:
        """Read the lines from the cursor on (see `iter_records` for `whole_lines_only`)."""
        file = self.file
        path, seen_uuids, result_lines = file.path, self._seen_uuids, self._result_lines
        for number, record in iter_records(path, file.issues, self.cursor, whole_lines_only=whole_lines_only):
            kind = record.kind
            if kind == "user" or kind == "assistant":
                uuid = record.uuid
                if isinstance(uuid, str):
                    if uuid in seen_uuids:
                        file.issues.append(SourceIssue(path, number, f"duplicate record uuid {uuid}; the first copy is kept", "note"))
                        continue
                    seen_uuids.add(uuid)
                _take_message(file, record, number, result_lines)
            elif kind == "system":
                _take_system(file, record)
            elif kind == PROGRESS:
                file.side(PROGRESS).add(record.copy_chars)
            elif kind == ATTACHMENT:
                file.side(ATTACHMENT).add(record.copy_chars)

    def finish(self) -> ClaudeFile:
        self.file.names.resolve(self.file.path, self.file.issues, "tool_result for tool_use")
        return self.file


def _take_message(file: ClaudeFile, record: ClaudeRecord, number: int, result_lines: dict[str, int]) -> None:
    _note_identity(file, record)
    if file.is_sidechain_file is None:
        file.is_sidechain_file = record.is_sidechain is True
    thread = file.sidechain if record.is_sidechain is True and not file.is_sidechain_file else file.thread
    message = record.message
    if not isinstance(message, dict):
        file.issues.append(SourceIssue(file.path, number, f"{record.kind} record without a message; skipped"))
        return
    if record.kind == "assistant":
        thread.add_assistant(message.get("id"), assistant_parts(message.get("content"), file.names, number))
        return
    parts, has_results = user_parts(message.get("content"), file.names, number)
    if has_results and file.outputs is not None and record.line is not None:
        _keep_measured(file.outputs, parts, record.line)
    typed = not has_results and thread is file.thread and thread.prompts.typed(
        message.get("content"), meta=record.is_meta is True, summary=record.is_compact_summary is True,
        sidechain=record.is_sidechain is True)
    thread.add_user(parts, has_results, typed)
    if record.tool_use_result_chars is not None:
        file.side(TOOL_USE_RESULT).add(record.tool_use_result_chars)
    for part in parts if has_results else ():
        fr = part.get("functionResponse")
        if fr is None:
            continue
        _note_duplicate_result(file, fr.get("id"), number, result_lines)
        text = result_text(fr)
        if thread is file.thread and is_persisted_stub(text):
            file.stubs.append((fr, text, thread.boundaries))


def _keep_measured(outputs: MeasuredOutputs, parts: list, line: tuple[int, int]) -> None:
    """Keep the long results of one user record measured (their text is read again from `line` when
    the history is asked for); a sentinel-headed one (a persisted-output stub) stays whole, to be parsed.
    The k-th result part is the record's k-th `tool_result` block (user_parts makes one per block)."""
    results = (part["functionResponse"] for part in parts if isinstance(part, dict) and "functionResponse" in part)
    for ordinal, fr in enumerate(results):
        response = fr["response"]
        key = "error" if "error" in response else "output"
        text = response.get(key)
        if type(text) is str and len(text) >= MEASURE_FROM and not text.startswith(SENTINEL_PREFIXES):
            response[key] = outputs.keep(text, HEAD_CHARS, line, ordinal)


def _result_in_record(record: object, ordinal: object) -> object:
    """The text of the `ordinal`-th tool_result block of a user record, as `tool_result_part` made it."""
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    blocks = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"] \
        if isinstance(content, list) else []
    return tool_result_text(blocks[ordinal])[0] if isinstance(ordinal, int) and ordinal < len(blocks) else None


def _note_identity(file: ClaudeFile, record: ClaudeRecord) -> None:
    if file.session_id is None and isinstance(record.session_id, str):
        file.session_id = record.session_id
        file.started = record.timestamp
        file.version = record.version
        file.cwd = record.cwd if isinstance(record.cwd, str) else None
    if file.agent_id is None and isinstance(record.agent_id, str):
        file.agent_id = record.agent_id


def _note_duplicate_result(file: ClaudeFile, tool_use_id: object, number: int, result_lines: dict[str, int]) -> None:
    if not isinstance(tool_use_id, str):
        return
    first = result_lines.setdefault(tool_use_id, number)
    if first != number:
        file.issues.append(SourceIssue(
            file.path, number, f"second tool_result for {tool_use_id} (first on line {first}); both are counted"))


def _take_system(file: ClaudeFile, record: ClaudeRecord) -> None:
    if record.subtype == "compact_boundary":
        file.thread.compact()
    elif record.subtype == "microcompact_boundary":
        file.thread.microcompact(record.compacted_ids)
