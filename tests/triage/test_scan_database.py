"""`doctor scan` fills the triage database from real recordings of every agent, through the CLI.

Expected figures come from Qwen Code's own `/doctor memory --json` answers recorded beside
each Qwen session (expected.json), and for the other agents from `doctor memory` on the same
file (the scan must agree with the per-session report it is built from).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from triage_support import FIXTURES, RECORDINGS, all_sources, memory_json, qwen_scenarios, scan, table

from doctor.core.sentinels import LAYERS
from doctor.sources.jsonl import iter_raw_lines
from doctor.triage.rows import LAYER_COLUMNS, RESULT_COLUMNS


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory) -> Path:
    """Every recording and public fixture, scanned once (in a subprocess-free, single-worker run)."""
    from doctor.cli import main

    db = tmp_path_factory.mktemp("corpus") / "triage.duckdb"
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.delenv("QWEN_HOME", raising=False)
        assert main(["scan", "--db", str(db), "--jobs", "1", "-o", str(db.with_suffix(".txt")),
                     str(RECORDINGS), str(FIXTURES)]) == 0  # their meta/script files: not sessions, not skipped
    return db


def _session(db: Path, path_end: str) -> dict:
    names = [row[0] for row in table(db, "SELECT column_name FROM information_schema.columns "
                                         "WHERE table_name = 'sessions' ORDER BY ordinal_position")]
    rows = [dict(zip(names, row)) for row in table(db, "SELECT * FROM sessions")]
    found = [row for row in rows if row["path"].endswith(path_end)]
    assert len(found) == 1, (path_end, [row["path"] for row in rows])
    return found[0]


def _judged_by_default_budgets(folder: Path) -> bool:
    """Whether the folder's expected.json is Qwen's answer under its default tool budgets, as a scan on a
    machine without Qwen settings judges it (a recording made to test a limit has its answer under it)."""
    run = json.loads((folder / "meta.json").read_text()).get("doctorRuns", {}).get("expected.json", {})
    return not run.get("settings", {}).get("tools")


@pytest.mark.parametrize("folder", [f for f in qwen_scenarios() if _judged_by_default_budgets(f)], ids=lambda p: p.name)
def test_qwen_sessions_carry_qwens_own_figures(corpus_db: Path, folder: Path) -> None:
    expected = json.loads((folder / "expected.json").read_text())["toolResultRetention"]
    row = _session(corpus_db, f"{folder.name}/session.jsonl")
    assert row["agent"] == "qwen" and row["agent_version"] == "0.24.4"
    assert row["tool_results"] == expected["toolResultCount"]
    assert row["retained_chars"] == expected["totalChars"]
    assert row["largest_chars"] == expected["largestResultChars"]
    assert row["oversized"] == expected["oversizedResultCount"]
    results = table(corpus_db, f"SELECT count(*), coalesce(sum(injected_chars), 0), coalesce(sum(oversized::INT), 0) "
                               f"FROM results WHERE session_key = '{row['session_key']}'")[0]
    assert results == (expected["toolResultCount"], expected["totalChars"], expected["oversizedResultCount"])


def _readable_sources(capsys) -> list[Path]:
    return [path for path in all_sources() if "retention" in memory_json(capsys, path)]


def test_every_session_matches_its_memory_report(capsys, corpus_db: Path) -> None:
    sources = _readable_sources(capsys)
    assert {"qwen", "claude", "codex", "gemini", "dump"} <= {memory_json(capsys, p)["source"]["agent"] for p in sources}
    for path in sources:
        report = memory_json(capsys, path, "--results")
        suffix = "/".join(path.parts[-2:])
        row = _session(corpus_db, suffix)
        assert row["agent"] == report["source"]["agent"] and row["session_id"] == report["source"]["sessionId"]
        assert row["agent_version"] == report["source"]["agentVersion"]
        assert row["size_bytes"] == path.stat().st_size
        assert row["records"] == report["source"]["records"] == _records(path), path
        if report["retention"]["available"]:
            stats = report["toolResultRetention"]
            assert (row["tool_results"], row["retained_chars"], row["oversized"]) == (
                stats["toolResultCount"], stats["totalChars"], stats["oversizedResultCount"]), path
            assert {layer: row[column] for column, layer in zip(LAYER_COLUMNS, LAYERS) if row[column]} == \
                report["retention"]["layers"]
            stored = table(corpus_db, f"SELECT ordinal, tool, raw_chars, injected_chars, tokens, layer, oversized, error "
                                      f"FROM results WHERE session_key = '{row['session_key']}' ORDER BY ordinal")
            assert stored == [(r["ordinal"], r["tool"], r["rawChars"], r["chars"], r["tokens"], r["layer"],
                               r["oversized"], r["isError"]) for r in report["retention"]["results"]], path


def _records(path: Path) -> int:
    """A JSON Lines file's lines (a last line without its newline is one); a JSON document is one record."""
    if path.suffix != ".jsonl":
        return 1
    return sum(1 for _, _, raw, terminated in iter_raw_lines(path) if terminated or raw)


def test_no_payload_text_in_the_database(corpus_db: Path) -> None:
    """Only names, sizes and layers: no column holds anything as long as a tool output."""
    for table_name in ("sessions", "results", "files"):
        for column, in table(corpus_db, f"SELECT column_name FROM information_schema.columns WHERE table_name = "
                                        f"'{table_name}' AND data_type = 'VARCHAR'"):
            if column == "tool":
                continue  # names as sent; a hostile fixture has a 40,000-char one
            longest = table(corpus_db, f"SELECT coalesce(max(length({column})), 0) FROM {table_name}")[0][0]
            assert longest < 300, (table_name, column, longest)
    assert table(corpus_db, "SELECT count(*) FROM results WHERE tool LIKE '%PAYLOAD%'")[0][0] == 0


def test_unknown_files_are_recorded_with_their_reason(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    shutil.copy(RECORDINGS / "qwen" / "errors" / "session.jsonl", folder / "good.jsonl")
    (folder / "garbage.jsonl").write_bytes(b"\x00\xffnot json at all\n")
    (folder / "empty.json").write_bytes(b"")
    (folder / "broken.tar.gz").write_bytes(b"\x1f\x8b\x08 not really gzip")
    db = tmp_path / "t.duckdb"
    code, out, err = scan(capsys, db, folder)
    assert code == 3, err
    assert "4 files seen; 4 new" in out and "3 skipped" in out
    skipped = dict(table(db, "SELECT path, reason FROM files WHERE status = 'skipped' ORDER BY path"))
    assert len(skipped) == 3
    assert skipped[next(p for p in skipped if p.endswith("empty.json"))].startswith("file is empty")
    assert "unknown session format" in skipped[next(p for p in skipped if p.endswith("garbage.jsonl"))]
    archive_reason = skipped[next(p for p in skipped if p.endswith("broken.tar.gz"))]
    assert archive_reason.startswith("not a readable tar or zip archive (gz: ") and "\n" not in archive_reason
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == 1
    assert "Skipped files" in out and "unknown session format" in out


def test_recordings_metadata_files_are_not_read_as_sessions(corpus_db: Path) -> None:
    """A recording's meta.json is not a session of any agent (a Qwen one has sessionId and projectHash,
    as a Gemini ConversationRecord has): the scan records it as not a session with the reason, and the only
    Gemini sessions are the real Gemini files."""
    metadata = sorted(RECORDINGS.rglob("meta.json"))
    assert any("qwen" in str(path) for path in metadata)
    rows = table(corpus_db, "SELECT status, reason FROM files WHERE path LIKE '%/meta.json'")
    assert len(rows) == len(metadata)
    assert all(status == "not-session" and reason.startswith("unknown session format") for status, reason in rows), rows
    assert table(corpus_db, "SELECT count(*) FROM sessions WHERE path LIKE '%meta.json'")[0][0] == 0
    nested = sorted(RECORDINGS.glob("gemini/*/*/home/.gemini/tmp/*/chats/*.jsonl"))  # e.g. gemini/whatif/<variant>
    gemini = [p for p in all_sources() + nested if {RECORDINGS / "gemini", FIXTURES / "gemini-cli"} & set(p.parents)]
    assert len(gemini) >= 5
    assert table(corpus_db, "SELECT count(*) FROM sessions WHERE agent = 'gemini'")[0][0] == len(gemini)


def test_rescan_skips_unchanged_files_and_appends_to_grown_ones(capsys, tmp_path: Path) -> None:
    source = RECORDINGS / "qwen" / "multi-turn" / "session.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "s"
    folder.mkdir()
    growing = folder / "session.jsonl"
    growing.write_bytes(b"".join(lines[: len(lines) // 2]))
    shutil.copy(RECORDINGS / "qwen" / "errors" / "session.jsonl", folder / "other.jsonl")
    db = tmp_path / "t.duckdb"
    assert scan(capsys, db, folder)[0] == 0
    before = dict(table(db, "SELECT ordinal, r.rowid FROM results r JOIN files f ON f.file_key = r.session_key "
                            "WHERE f.path LIKE '%session.jsonl'"))
    other = table(db, "SELECT r.rowid, r.* FROM results r JOIN files f ON f.file_key = r.session_key "
                      "WHERE f.path LIKE '%other.jsonl' ORDER BY ordinal")
    assert before, "the first half already holds results"

    code, out, _ = scan(capsys, db, folder)
    assert code == 0 and "2 unchanged" in out

    growing.write_bytes(b"".join(lines))
    code, out, _ = scan(capsys, db, folder)
    assert code == 0 and "1 grown, 1 unchanged" in out
    appended = table(db, "SELECT results_written FROM scans ORDER BY scan_id DESC LIMIT 1")[0][0]
    after = dict(table(db, "SELECT ordinal, r.rowid FROM results r JOIN files f ON f.file_key = r.session_key "
                           "WHERE f.path LIKE '%session.jsonl'"))
    assert {k: after[k] for k in before} == before, "stored rows were kept, not rewritten"
    assert len(after) > len(before) and appended == len(after) - len(before), "only the new rows were written"
    assert table(db, "SELECT r.rowid, r.* FROM results r JOIN files f ON f.file_key = r.session_key "
                     "WHERE f.path LIKE '%other.jsonl' ORDER BY ordinal") == other

    fresh = tmp_path / "fresh.duckdb"
    assert scan(capsys, fresh, growing)[0] == 0
    columns = ", ".join(RESULT_COLUMNS)
    assert table(db, f"SELECT {columns} FROM results r JOIN files f ON f.file_key = r.session_key "
                     f"WHERE f.path LIKE '%session.jsonl' ORDER BY ordinal") == \
        table(fresh, f"SELECT {columns} FROM results ORDER BY ordinal")

    growing.write_bytes(b"".join(lines[:3]))  # rewritten shorter: every row replaced
    code, out, _ = scan(capsys, db, folder)
    assert "1 changed" in out
    assert table(db, "SELECT count(*) FROM results r JOIN files f ON f.file_key = r.session_key "
                     "WHERE f.path LIKE '%session.jsonl'")[0][0] < len(before)


def test_archives_and_pasted_reports_fill_the_same_rows(capsys, tmp_path: Path) -> None:
    session = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"
    claude = next(p for p in all_sources() if "claude/big-outputs" in str(p))
    reports = tmp_path / "reports"
    reports.mkdir()
    for name, source in (("qwen.json", session), ("claude.json", claude)):
        report = memory_json(capsys, source, "--results")
        (reports / name).write_text(json.dumps(report))
    (reports / "short.json").write_text(json.dumps(memory_json(capsys, session)))  # pasted without --results
    with tarfile.open(tmp_path / "inbox.tar.gz", "w:gz") as archive:
        archive.add(session, arcname="user1/session.jsonl")
    with zipfile.ZipFile(tmp_path / "inbox.zip", "w") as archive:
        archive.write(claude, arcname="../user2/claude.jsonl")
        archive.write(reports / "qwen.json", arcname="qwen-report.json")

    direct, pasted, packed = tmp_path / "direct.duckdb", tmp_path / "pasted.duckdb", tmp_path / "packed.duckdb"
    assert scan(capsys, direct, session, claude)[0] == 0
    assert scan(capsys, pasted, reports)[0] == 0
    assert scan(capsys, packed, tmp_path / "inbox.tar.gz", tmp_path / "inbox.zip")[0] == 0

    keep = ("agent, agent_version, session_id, project_hash, size_bytes, records, tool_results, retained_chars, "
            "retained_tokens, largest_chars, oversized, " + ", ".join(LAYER_COLUMNS) + ", side_channel_chars, "
            "side_channel_copies, input_problems, results_complete")
    expected = table(direct, f"SELECT {keep} FROM sessions ORDER BY agent")
    assert table(pasted, f"SELECT {keep} FROM sessions WHERE results_complete ORDER BY agent") == expected
    assert table(pasted, "SELECT source, tool_results, results_complete FROM sessions WHERE NOT results_complete") == \
        [("report", expected[-1][6], False)]
    packed_rows = table(packed, f"SELECT {keep} FROM sessions ORDER BY agent, path")
    assert sorted(packed_rows) == sorted([*expected, expected[-1]])  # qwen twice: the session and its report
    # The project hash is the recorded working directory's, wherever the file sits (an archive member too;
    # a report pasted without --results carries none).
    for source, agent in ((session, "qwen"), (claude, "claude")):
        cwd = next(record["cwd"] for record in map(json.loads, source.read_text().splitlines()) if "cwd" in record)
        digest = hashlib.sha256(cwd.encode()).hexdigest()[:16]
        for db in (direct, pasted, packed):
            assert {row[0] for row in table(db, f"SELECT project_hash FROM sessions WHERE agent = '{agent}' "
                                               f"AND results_complete")} == \
                {digest}, (db, agent)
    results = ", ".join(f"r.{column}" for column in RESULT_COLUMNS)
    for other in (pasted, packed):
        for agent in ("qwen", "claude"):
            assert table(other, f"SELECT DISTINCT {results} FROM results r JOIN sessions USING (session_key) "
                                f"WHERE agent = '{agent}' ORDER BY r.ordinal") == \
                table(direct, f"SELECT {results} FROM results r JOIN sessions USING (session_key) "
                              f"WHERE agent = '{agent}' ORDER BY r.ordinal")
    members = [row[0] for row in table(packed, "SELECT path FROM sessions ORDER BY path")]
    assert any(path.endswith("inbox.tar.gz!user1/session.jsonl") for path in members)
    assert any(path.endswith("inbox.zip!../user2/claude.jsonl") for path in members)
    assert not (tmp_path.parent / "user2").exists()
    assert table(packed, "SELECT count(*) FROM sessions WHERE spill_findings IS NOT NULL AND source = 'session'")[0][0] == 0


def test_a_member_name_twice_in_a_tar_is_one_session(capsys, tmp_path: Path) -> None:
    """tar keeps both copies of a name added twice; the database keeps one row for it (the last read)."""
    first, second = RECORDINGS / "qwen" / "errors" / "session.jsonl", RECORDINGS / "qwen" / "rewind" / "session.jsonl"
    archive = tmp_path / "twice.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(first, arcname="s.jsonl")
        tar.add(second, arcname="s.jsonl")
    db = tmp_path / "t.duckdb"
    code, out, err = scan(capsys, db, archive)
    assert code == 0, err
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == 1
    assert table(db, "SELECT count(*) FROM files WHERE archive_key IS NOT NULL")[0][0] == 1
    rows = table(db, "SELECT count(*) FROM results")[0][0]
    assert rows == table(db, "SELECT tool_results FROM sessions")[0][0]


def test_paths_follow_the_chosen_style(capsys, tmp_path: Path) -> None:
    session = RECORDINGS / "qwen" / "errors" / "session.jsonl"
    db = tmp_path / "t.duckdb"
    assert scan(capsys, db, "--paths", "hash", session)[0] == 0
    paths = [row[0] for row in table(db, "SELECT path FROM sessions UNION ALL SELECT path FROM files")]
    assert paths and all(path.startswith("sha256:") and "errors" not in path for path in paths)
    full = tmp_path / "full.duckdb"
    assert scan(capsys, full, "--paths", "full", session)[0] == 0
    assert table(full, "SELECT path FROM sessions") == [(str(session.absolute()),)]


def test_query_and_parquet_export(capsys, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    sessions = [RECORDINGS / "qwen" / name / "session.jsonl" for name in ("errors", "batch-budget")]
    assert scan(capsys, db, *sessions)[0] == 0
    code, out, _ = scan(capsys, db, "--query", "SELECT count(*) AS n, sum(tool_results) AS r FROM sessions")
    expected = [sum(json.loads((s.parent / "expected.json").read_text())["toolResultRetention"]["toolResultCount"]
                    for s in sessions)]
    assert code == 0 and out.splitlines() == ["n\tr", f"2\t{expected[0]}"]
    code, _, err = scan(capsys, db, "--query", "DELETE FROM sessions")
    assert code == 5 and "--query refused" in err and table(db, "SELECT count(*) FROM sessions")[0][0] == 2
    code, _, err = scan(capsys, db, "--query", "SELEC nonsense")
    assert code == 2 and err.count("\n") == 1
    out_dir = tmp_path / "parquet"
    assert scan(capsys, db, "--parquet", out_dir)[0] == 0
    import duckdb

    for name in ("sessions", "results"):
        with duckdb.connect() as connection:
            exported = connection.execute(f"SELECT * FROM '{out_dir / name}.parquet' ORDER BY ALL").fetchall()
        assert exported == table(db, f"SELECT * FROM {name} ORDER BY ALL")


def test_answers_without_a_database_fail_clearly(capsys, tmp_path: Path) -> None:
    code, _, err = scan(capsys, tmp_path / "none.duckdb")
    assert code == 2 and "none.duckdb" in err and err.count("\n") == 1
    assert not (tmp_path / "none.duckdb").exists()
    code, _, err = scan(capsys, tmp_path / "db", tmp_path / "missing.jsonl")
    assert code == 2 and "missing.jsonl: no such file" in err and not (tmp_path / "db").exists()


def test_lone_surrogates_are_stored_as_replacement_characters(capsys, tmp_path: Path) -> None:
    """DuckDB holds valid UTF-8 only: a tool name with JSON's lone-surrogate escape, or a file name that is
    not UTF-8, used to stop the whole scan (exit 4) at the insert; each is stored with U+FFFD in its place."""
    import os

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    text = (RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl").read_text()
    assert '"name":"glob"' in text
    (inbox / "tool.jsonl").write_text(text.replace('"name":"glob"', '"name":"glob\\ud800"'))
    try:
        odd_name = os.fsdecode(os.fsencode(str(inbox)) + b"/not-utf8-\xff.jsonl")
        shutil.copy(RECORDINGS / "qwen" / "errors" / "session.jsonl", odd_name)
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses a file name that is not UTF-8")
    db = tmp_path / "t.duckdb"
    code, out, err = scan(capsys, db, inbox)
    assert code == 0, err
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == 2
    assert ("glob\ufffd",) in table(db, "SELECT DISTINCT tool FROM results")
    assert any(path.endswith("not-utf8-\ufffd.jsonl") for (path,) in table(db, "SELECT path FROM files"))


@pytest.mark.parametrize("edit, named", [
    (lambda result: result.update(rawChars="12"), "$.retention.results[0].rawChars is '12'"),
    (lambda result: result.update(oversized="yes"), "$.retention.results[0].oversized is 'yes'"),
    (lambda result: result.update(budget={"chars": "many", "source": "tool"}), "'many'"),
    (lambda result: result.update(tokens=2 ** 63 + 1), "$.retention.results[0].tokens is 9223372036854775809"),
])
def test_a_pasted_report_with_figures_of_the_wrong_kind_is_skipped_with_its_reason(capsys, tmp_path, edit, named):
    """A report is JSON anyone could have edited; such a figure used to stop the whole scan at the insert."""
    report = memory_json(capsys, RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl", "--results")
    edit(report["retention"]["results"][0])
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "pasted.json").write_text(json.dumps(report))
    shutil.copy(RECORDINGS / "qwen" / "errors" / "session.jsonl", inbox / "good.jsonl")
    db = tmp_path / "t.duckdb"
    code, out, err = scan(capsys, db, inbox)
    assert code == 3, err
    [(status, reason)] = table(db, "SELECT status, reason FROM files WHERE path LIKE '%pasted.json'")
    assert status == "skipped" and reason.startswith("a doctor report that does not follow") and named in reason
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == 1
