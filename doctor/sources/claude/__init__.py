"""Claude Code sessions: `~/.claude/projects/<escaped cwd>/<session id>.jsonl`.

`history` is the active context of the file's own thread: what follows the last
compact boundary, with microcompacted results cleared as the request shows
them. What the whole file holds (results before the boundary included) is in
`meta["whole_file"]`, and what compaction dropped is the "compacted" side
channel. A main file's subagents (`<session id>/subagents/agent-*.jsonl`) are
listed in `meta["subagents"]` with their own figures and never mixed into the
main history; opened directly, a subagent file is a session of its own.
"""

from __future__ import annotations

from pathlib import Path

from doctor.sources.base import LoadedSession, SideChannelCopy
from doctor.sources.claude_codex_common import history_summary
from doctor.sources.claude.file import ClaudeFile, read_claude_file
from doctor.sources.claude.spill import spill_roots
from doctor.sources.jsonl import loads

NAME = "claude"
ALIASES = ("claude-code",)
RECORD_TYPES = frozenset({
    "user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment",
})
COMPACTED = "compacted"
MICROCOMPACTED = "microcompacted"
INLINE_SIDECHAIN = "inline-sidechain"


def sniff(path: Path, head: bytes) -> bool:
    """A JSON line with a Claude record type and a Claude field (message.content, sessionId, leafUuid)."""
    for record in head.records(50):
        if record.get("type") not in RECORD_TYPES:
            continue
        message = record.get("message")
        if isinstance(message, dict):
            return "content" in message and "parts" not in message
        return "sessionId" in record or "leafUuid" in record or "messageId" in record
    return False


def read(path: Path) -> LoadedSession:
    path = Path(path)
    file = read_claude_file(path)
    session = session_from_file(file)
    if not file.is_sidechain_file:
        session.meta["subagents"] = [_subagent_row(agent, session) for agent in _subagent_files(path)]
    return session


def session_from_file(file: ClaudeFile, *, details: bool = True) -> LoadedSession:
    """The session of one file read to its end, without the subagents' figures (separate files, never
    in this history). `doctor statusline` gets the file from a resumed read and asks for no
    `details`: its meta then holds only what the retention figures depend on (the client version
    and cwd), not the whole-file and compaction tallies or the persisted-output rows (a stat each)."""
    path = file.path
    contents = file.thread.contents
    outputs = file.outputs
    session = LoadedSession(
        agent=NAME,
        path=path,
        # Long results are kept measured (doctor/sources/measured_outputs.py): the history reads them again.
        history=(lambda: outputs.restored(contents)) if outputs else (lambda: iter(contents)),
        # The list itself: the analysis then parses a stub's header only for the rows someone reads.
        measured_history=lambda: contents,
        session_id=file.session_id,
        format="claude-code subagent jsonl" if file.is_sidechain_file else "claude-code jsonl",
        side_channel=file.side_channel,
        issues=file.issues,
        project_dir=path.parent.parent.parent if path.parent.name == "subagents" else path.parent,
        spill_roots=spill_roots(path),
        started=file.started,
        meta=_meta(file) if details else {"client_version": file.version, "cwd": file.cwd},
        turns_marked=True,
    )
    _add_thread_side_channels(file, session)
    return session


def _meta(file: ClaudeFile) -> dict:
    thread = file.thread
    meta = {
        "client_version": file.version,
        "cwd": file.cwd,
        "whole_file": thread.seen.figures(file.names),
        "compaction": {"boundaries": thread.boundaries, **thread.compacted.figures(file.names)},
        "microcompaction": thread.microcompacted.figures(file.names),
        "persisted_outputs": file.persisted_outputs(),
    }
    if file.agent_id is not None:
        meta["agent_id"] = file.agent_id
    if file.sidechain.contents:
        meta["inline_sidechain"] = history_summary(file.sidechain.contents)
    return meta


def _add_thread_side_channels(file: ClaudeFile, session: LoadedSession) -> None:
    """Tool results the file keeps that the model no longer (or never) holds."""
    tallies = ((COMPACTED, file.thread.compacted), (MICROCOMPACTED, file.thread.microcompacted),
               (INLINE_SIDECHAIN, file.sidechain.seen))
    for kind, tally in tallies:
        if tally.count:
            session.side_channel[kind] = SideChannelCopy(kind, tally.count, tally.raw_chars)


def _subagent_files(path: Path) -> list[Path]:
    return sorted((path.with_suffix("") / "subagents").glob("agent-*.jsonl"))


def _subagent_row(agent_path: Path, parent: LoadedSession) -> dict:
    """A subagent's own retention figures, read as a separate session."""
    agent = read_claude_file(agent_path)
    parent.issues.extend(agent.issues)
    row = {
        "path": str(agent_path),
        "agent_id": agent.agent_id or agent_path.stem.removeprefix("agent-"),
        **history_summary(agent.thread.contents),
        "persisted_outputs": agent.persisted_outputs(),
        "side_channel": {kind: {"count": copy.count, "chars": copy.chars} for kind, copy in agent.side_channel.items()},
    }
    row.update(_agent_card(agent_path.with_suffix(".meta.json")))
    return row


def _agent_card(card: Path) -> dict:
    """`agent-<id>.meta.json` (2.1.3xx): which tool call started the subagent, and its type."""
    try:
        data = loads(card.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: data[key] for key in ("agentType", "toolUseId", "description") if key in data}
