"""Skipped files by name, no noise for the files agents write beside their sessions, and a PATH that holds
nothing to scan, through the CLI on real recordings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from triage_support import RECORDINGS, run_cli, scan, table

CLAUDE_HOME = RECORDINGS / "claude" / "subagent" / "home" / ".claude"


def test_a_clean_claude_folder_is_not_partial(capsys, tmp_path: Path) -> None:
    """A subagent's `.meta.json` is Claude Code's, not a session: listed with --skipped, exit 0."""
    db = tmp_path / "t.duckdb"
    meta = next(CLAUDE_HOME.rglob("*.meta.json"))
    code, out, err = scan(capsys, db, CLAUDE_HOME, "--json")
    assert code == 0, err
    answers = json.loads(out)
    assert (answers["scan"]["skipped"], answers["scan"]["notSessions"]) == (0, 1)
    assert answers["skippedFiles"] == []
    code, out, err = scan(capsys, db, "--json", "--skipped")
    listed = json.loads(out)["skippedFiles"]
    assert [(Path(row["path"]).name, row["status"]) for row in listed] == [(meta.name, "not-session")]
    code, out, err = scan(capsys, db, "--skipped")
    assert meta.name in out and "not a session" in out
    code, out, err = scan(capsys, tmp_path / "named.duckdb", meta)  # named on the command line: it was asked for
    assert code == 3 and f"{meta}: not a session or doctor report (unknown session format" in err


def test_skipped_files_are_named_top_n_and_all_with_skipped(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    session = next(RECORDINGS.glob("codex/*/home/.codex/sessions/*/*/*/rollout-*.jsonl"))
    report = tmp_path / "report.json"
    assert run_cli(capsys, "memory", session, "--json", "-o", report)[0] in (0, 3)
    for index in range(4):  # a pasted report cut short: recognised as doctor's, refused as damaged
        (folder / f"broken-{index}.json").write_bytes(report.read_bytes()[:300])
    shutil.copy(session, folder / "good.jsonl")
    db = tmp_path / "t.duckdb"
    code, out, err = scan(capsys, db, folder, "--json", "--top", "2")
    assert code == 3, err
    answers = json.loads(out)
    stored = table(db, "SELECT path, reason FROM files WHERE status = 'skipped' ORDER BY path")
    assert len(stored) == 4
    assert [(row["path"], row["reason"]) for row in answers["skippedFiles"]] == stored[:2]
    code, out, err = scan(capsys, db, "--json", "--skipped")
    assert [(row["path"], row["reason"]) for row in json.loads(out)["skippedFiles"]] == stored
    code, out, err = scan(capsys, db, "--top", "2")
    assert "broken-0.json" in out and "broken-3.json" not in out and "2 more: --skipped lists every one" in out


def test_an_empty_folder_says_so(capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a session")
    db = tmp_path / "t.duckdb"
    code, out, err = scan(capsys, db, empty)
    assert code == 2 and not db.exists(), err
    assert err.strip() == (f"doctor scan: {empty}: no session files, reports or archives in this folder "
                           "(doctor scan reads .json/.jsonl files and tar/zip archives, at any depth)")
    assert scan(capsys, db, CLAUDE_HOME, "-o", tmp_path / "a.txt")[0] == 0  # a database that has answers
    code, out, err = scan(capsys, db, empty)
    assert code == 2 and out == "" and "no session files" in err  # not the old answers in silence
    code, out, err = scan(capsys, db, empty, CLAUDE_HOME, "-o", tmp_path / "b.txt")
    assert code == 3 and "no session files" in err  # the rest is scanned, the empty folder said




def test_sessions_at_risk_are_named_so_they_can_be_found(capsys, tmp_path: Path) -> None:
    """Two different sessions both stored as `/…/qwen/session.jsonl` (--paths short) stay apart, by session id
    and by path; --paths full shows the whole path in every format."""
    deep = tmp_path / "customers" / "a-rather-long-customer-folder-name" / "tickets"
    sessions = [RECORDINGS / "qwen" / name / "session.jsonl" for name in ("oversized-alarm", "errors")]
    for name, session in zip(("first", "second"), sessions):
        (deep / name / "qwen").mkdir(parents=True)
        shutil.copy(session, deep / name / "qwen" / "session.jsonl")
    ids = {json.loads(line)["sessionId"] for session in sessions for line in session.read_text().splitlines()[:1]}
    short = tmp_path / "short.duckdb"
    code, out, err = scan(capsys, short, deep, "--json")
    assert code == 0, err
    risk = json.loads(out)["sessionsAtRisk"]
    assert {row["session_id"] for row in risk} == ids
    paths = [row["path"] for row in risk]
    assert len(set(paths)) == 2 and all(path.startswith("/…/qwen/session.jsonl #") for path in paths), paths
    code, out, err = scan(capsys, short)
    assert all(session_id in out for session_id in ids) and all(path in out for path in paths)
    full = tmp_path / "full.duckdb"
    assert scan(capsys, full, deep, "--paths", "full", "-o", tmp_path / "a.txt")[0] == 0
    for fmt in ("text", "markdown", "html"):
        code, out, err = scan(capsys, full, "--format", fmt)
        for name in ("first", "second"):
            assert str(deep / name / "qwen" / "session.jsonl") in out.replace("\\", ""), (fmt, name)
