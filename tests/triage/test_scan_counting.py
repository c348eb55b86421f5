"""One session counts once in every answer of `doctor scan`, whichever files and reports carried it;
files that are gone leave the answers and `--prune` deletes them. Through the CLI, on a real recording
and its own `doctor memory --json` reports; expected figures from `doctor memory` on the session."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from triage_support import RECORDINGS, memory_json, run_cli, table

SESSION = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"


def _answers(capsys, db: Path, *paths) -> dict:
    code, out, err = run_cli(capsys, "scan", "--db", db, "--jobs", "1", "--json", *paths)
    assert code == 0, err
    return json.loads(out)


def _report(capsys, target: Path, *extra) -> Path:
    code, _, err = run_cli(capsys, "memory", SESSION, "--json", *extra, "-o", target)
    assert code in (0, 3), err
    return target


def test_a_session_and_its_pasted_reports_count_once(capsys, tmp_path: Path) -> None:
    expected = memory_json(capsys, SESSION, "--results")
    stats = expected["toolResultRetention"]
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(SESSION, inbox / "session.jsonl")
    _report(capsys, inbox / "with-results.json", "--results")
    _report(capsys, inbox / "plain.json")
    data = _answers(capsys, tmp_path / "t.duckdb", inbox)
    totals = data["totals"]
    assert (totals["sessions"], totals["from_reports"]) == (1, 0)
    assert totals["results"] == stats["toolResultCount"]
    assert totals["oversized"] == stats["oversizedResultCount"]
    assert totals["extra_copies"] == 2
    assert sum(row["sessions"] for row in totals["agents"]) == 1
    assert sum(tool["results"] for tool in data["tools"]) == stats["toolResultCount"]
    assert len(data["sessionsAtRisk"]) == 1
    # every copy is kept, with where it came from
    assert sorted(table(tmp_path / "t.duckdb", "SELECT source, results_complete FROM sessions")) == [
        ("report", False), ("report", True), ("session", True)]


def test_reports_alone_count_once_preferring_the_one_with_results(capsys, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    _report(capsys, inbox / "a.json")
    _report(capsys, inbox / "b.json", "--results")
    data = _answers(capsys, tmp_path / "t.duckdb", inbox)
    stats = memory_json(capsys, SESSION)["toolResultRetention"]
    assert (data["totals"]["sessions"], data["totals"]["from_reports"]) == (1, 1)
    assert data["totals"]["results"] == stats["toolResultCount"]
    assert data["totals"]["without_result_rows"] == 0


def test_a_rename_and_a_symlinked_path_count_once_and_deleted_files_leave(capsys, tmp_path: Path) -> None:
    stats = memory_json(capsys, SESSION)["toolResultRetention"]
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(SESSION, folder / "session.jsonl")
    link = tmp_path / "link"
    link.symlink_to(folder)
    db = tmp_path / "t.duckdb"
    _answers(capsys, db, folder)
    (folder / "session.jsonl").rename(folder / "renamed.jsonl")
    data = _answers(capsys, db, folder, link)
    assert data["totals"]["sessions"] == 1 and data["totals"]["results"] == stats["toolResultCount"]
    assert data["totals"]["files_gone"] == 1
    assert table(db, "SELECT status, count(*) FROM files GROUP BY ALL ORDER BY ALL") == [("gone", 1), ("ok", 2)]

    os.unlink(folder / "renamed.jsonl")
    data = _answers(capsys, db, folder, link)
    assert data["totals"]["sessions"] == 0 and data["totals"]["results"] == 0 and data["tools"] == []
    assert data["totals"]["files_gone"] == 3
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == 3, "gone rows stay until --prune"

    code, _, err = run_cli(capsys, "scan", "--db", db, "--prune")
    assert code == 0 and "pruned 3 files marked gone" in err, err
    assert table(db, "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM results), "
                     "(SELECT count(*) FROM files)") == [(0, 0, 0)]


def test_a_file_named_alone_is_never_marked_gone_by_a_folder_scan_elsewhere(capsys, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    _answers(capsys, db, SESSION)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    shutil.copy(RECORDINGS / "qwen" / "errors" / "session.jsonl", empty / "other.jsonl")
    data = _answers(capsys, db, empty)
    assert data["totals"]["sessions"] == 2 and data["totals"]["files_gone"] == 0
