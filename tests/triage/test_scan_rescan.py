"""Re-scans that must not be sticky: `--force`, a same-size rewrite whose writer kept the mtime (and the
first and last 16 KB), and `--paths` changed between scans. Through the CLI on real recordings."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from triage_support import RECORDINGS, run_cli, table

MULTI_TURN = RECORDINGS / "qwen" / "multi-turn" / "session.jsonl"


def _scan(capsys, db: Path, *args) -> dict:
    code, out, err = run_cli(capsys, "scan", "--db", db, "--jobs", "1", "--json", *args)
    assert code == 0, err
    return json.loads(out)


def _tools(db: Path) -> list[tuple]:
    return table(db, "SELECT tool, count(*), sum(injected_chars) FROM results GROUP BY tool ORDER BY tool")


def test_a_same_size_rewrite_with_the_mtime_kept_is_read_again(capsys, tmp_path: Path) -> None:
    session = tmp_path / "s" / "session.jsonl"
    session.parent.mkdir()
    shutil.copy(MULTI_TURN, session)
    db = tmp_path / "t.duckdb"
    _scan(capsys, db, session)
    assert ("edit", 1) in [row[:2] for row in _tools(db)]

    data = session.read_bytes()
    edge = 16 * 1024
    middle = data[edge:-edge]
    assert middle.count(b'"name":"edit"') == data.count(b'"name":"edit"') == 2, "only in the middle"
    before = session.stat()
    renamed = data[:edge] + middle.replace(b'"name":"edit"', b'"name":"tide"') + data[-edge:]
    assert len(renamed) == len(data)
    session.write_bytes(renamed)
    os.utime(session, ns=(before.st_atime_ns, before.st_mtime_ns))  # the writer kept the mtime
    assert session.stat().st_size == before.st_size and session.stat().st_mtime_ns == before.st_mtime_ns

    answers = _scan(capsys, db, session)
    assert answers["scan"]["changed"] == 1 and answers["scan"]["unchanged"] == 0
    fresh = tmp_path / "fresh.duckdb"
    _scan(capsys, fresh, session)
    assert _tools(db) == _tools(fresh)
    assert "tide" in [row[0] for row in _tools(db)] and "edit" not in [row[0] for row in _tools(db)]


def test_force_reads_every_file_again(capsys, tmp_path: Path) -> None:
    sessions = [RECORDINGS / "qwen" / name / "session.jsonl" for name in ("errors", "rewind")]
    db = tmp_path / "t.duckdb"
    first = _scan(capsys, db, *sessions)["scan"]
    assert first["new"] == 2
    again = _scan(capsys, db, *sessions)["scan"]
    assert (again["unchanged"], again["changed"]) == (2, 0)
    forced = _scan(capsys, db, "--force", *sessions)["scan"]
    assert (forced["unchanged"], forced["changed"]) == (0, 2)
    assert table(db, "SELECT files_changed, results_written FROM scans WHERE scan_id = 3") == [
        (2, table(db, "SELECT count(*) FROM results")[0][0])]


def test_paths_full_after_short_is_applied_to_unchanged_files(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    (folder / "errors").mkdir(parents=True)
    shutil.copy(RECORDINGS / "qwen" / "errors" / "session.jsonl", folder / "errors" / "session.jsonl")
    db = tmp_path / "t.duckdb"
    _scan(capsys, db, "--paths", "short", folder)
    [(short,)] = table(db, "SELECT path FROM sessions")
    assert short != str(folder / "errors" / "session.jsonl")
    data = _scan(capsys, db, "--paths", "full", folder)
    assert data["scan"]["unchanged"] == len(table(db, "SELECT * FROM files"))
    full = str((folder / "errors" / "session.jsonl").absolute())
    assert table(db, "SELECT path FROM sessions") == [(full,)]
    assert (full,) in table(db, "SELECT path FROM files")
    assert [row["path"] for row in data["sessionsAtRisk"]] == [full]
