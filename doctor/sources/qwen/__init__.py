"""Qwen Code 0.24.4 recordings (`~/.qwen/projects/<project>/chats/<sessionId>.jsonl`).

`read` gives the history `qwen --resume <id>` holds when `/doctor memory` runs
(see `shared/reference/qwen-0.24.4-facts.md` §d): pass 1 (`transcript`)
indexes the file and walks the active chain; the history (`history`) and
the UI history (`ui`) re-read only the chain's lines each time they are
iterated, so a recording of any size streams.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from doctor.core.settings import qwen_home
from doctor.sources.base import LoadedSession, SourceError, SourceIssue
from doctor.sources.qwen.history import resumed_history
from doctor.sources.qwen.records import RECORD_TYPES
from doctor.sources.qwen.transcript import ChainRecords, TranscriptIndex, build_index
from doctor.sources.qwen.ui import QwenUiHistory

NAME = "qwen"
FORMAT = "qwen-jsonl"
_SNIFF_LINES = 20


def sniff(path: Path, head: bytes) -> bool:
    """A Qwen record: uuid, parentUuid, sessionId, a Qwen type, and Gemini `parts` (not Claude `content`)."""
    for value in head.records(_SNIFF_LINES):
        if not {"uuid", "sessionId", "type"} <= value.keys() or value.get("type") not in RECORD_TYPES:
            return False
        message = value.get("message")
        if type(message) is dict:
            return "parts" in message and "content" not in message
        if value.get("type") == "tool_result" or "systemPayload" in value:
            return True
    return False


def read(path: Path) -> LoadedSession:
    return session_from_index(build_index(Path(path)))


def session_from_index(index: TranscriptIndex, walked: tuple | None = None) -> LoadedSession:
    """The session as pass 1 has seen it so far (`--follow` keeps extending the index).
    `walked`: `index.walk_chain()`'s answer when the caller has it (the status line extends its last one)."""
    path = index.path
    if index.first_record is None:
        raise SourceError(path, "no Qwen records in this file")
    chain, gap, cycle = index.walk_chain() if walked is None else walked
    issues = [*index.issues, *_chain_issues(index, gap, cycle)]
    records = ChainRecords(index, chain)

    def report(message: str) -> None:
        issue = SourceIssue(path, None, message)
        if issue not in issues:
            issues.append(issue)

    first = index.first_record
    cwd = first.get("cwd") if isinstance(first.get("cwd"), str) else None
    session = LoadedSession(
        agent=NAME,
        path=path,
        history=lambda: resumed_history(records, report),
        measured_history=lambda: resumed_history(records, report, measured=True),
        session_id=first.get("sessionId") if isinstance(first.get("sessionId"), str) else None,
        format=FORMAT,
        ui_history=QwenUiHistory(records, gap),
        measured_ui_history=QwenUiHistory(records, gap, measured=True),
        issues=issues,
        project_dir=Path(cwd) if cwd else None,
        spill_roots=spill_roots(path, cwd),
        started=first.get("timestamp") if isinstance(first.get("timestamp"), str) else None,
        meta={"chainRecords": len(chain), "historyGap": gap is not None,
              "client_version": first.get("version") if isinstance(first.get("version"), str) else None},
        turns_marked=True,
    )
    session.side_channel[index.ui_display.kind] = replace(index.ui_display)  # the index keeps counting
    return session


def _chain_issues(index: TranscriptIndex, gap, cycle: str | None) -> list[SourceIssue]:
    path = index.path
    issues = []
    if len(index.session_ids) > 1:
        ids = ", ".join(f"{sid} (from line {line})" for sid, line in index.session_ids.items())
        issues.append(
            SourceIssue(path, None, f"records carry more than one sessionId ({ids}); Qwen 0.24.4 refuses to resume this file")
        )
    if gap is not None:
        issues.append(
            SourceIssue(
                path,
                None,
                f"gap in the parent chain: record {gap.child_uuid} names parent {gap.missing_parent_uuid}, "
                "which no record defines; older records are not part of the resumed history (as in Qwen)",
            )
        )
    if cycle is not None:
        issues.append(SourceIssue(path, None, f"the parent chain loops back to record {cycle}; the walk stops there"))
    return issues


def spill_roots(path: Path, cwd: str | None) -> list[Path]:
    """Where Qwen put this project's spill files, and a recording folder's own `tmp/` copy."""
    roots = []
    if cwd:
        roots.append(qwen_home() / "tmp" / hashlib.sha256(cwd.encode()).hexdigest())
    sibling = path.parent / "tmp"
    if sibling.is_dir():
        roots.append(sibling)
    return roots
