"""`--since/--until`, `--where` and `--label` through the CLI: every answer and export keeps only the chosen
sessions. Expected figures come from `doctor memory --json --results` of the same real sessions (the
`corpus` fixture), counted here without SQL."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pyarrow.parquet as pq
from triage_support import RECORDINGS, run_cli, scan, table


def _answers(capsys, db: Path, *extra) -> dict:
    code, out, err = run_cli(capsys, "scan", "--db", db, "--json", "--top", 50, *extra)
    assert code == 0, err
    return json.loads(out)


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment.astimezone(timezone.utc).replace(tzinfo=None) if moment.tzinfo else moment


def test_started_is_stored_as_a_timestamp(corpus) -> None:
    db, reports = corpus
    assert {row[0] for row in table(db, "SELECT typeof(started) FROM sessions")} == {"TIMESTAMP"}
    stored = set(table(db, "SELECT session_id, started FROM sessions WHERE started IS NOT NULL"))
    timed = {(r["source"]["sessionId"], _utc(r["source"]["started"])) for r in reports if r["source"]["started"]}
    assert timed and timed <= stored


def test_where_agent_keeps_every_answer_to_that_agent(capsys, corpus, tmp_path: Path) -> None:
    db, reports = corpus
    codex = [r for r in reports if r["source"]["agent"] == "codex"]
    results = [result for r in codex for result in r["retention"]["results"]]
    answers = _answers(capsys, db, "--where", "agent=codex", "--parquet", tmp_path)
    totals = answers["totals"]
    assert answers["filters"] == ["agent is codex"]
    assert {a["agent"] for a in totals["agents"]} == {"codex"}
    assert (totals["results"], totals["injected_chars"]) == (len(results), sum(r["chars"] for r in results))
    assert {t["tool"] for t in answers["tools"]} == {r["tool"] for r in results}
    assert {row["agent"] for row in answers["sessionsAtRisk"]} == {"codex"}
    assert {row["agent"] for row in answers["layers"]} == {"codex"}
    assert pq.read_table(tmp_path / "results.parquet").num_rows == len(results)
    assert set(pq.read_table(tmp_path / "sessions.parquet").column("agent").to_pylist()) == {"codex"}
    code, out, err = run_cli(capsys, "scan", "--db", db, "--where", "agent=codex", "--json", "--query",
                             "SELECT count(*) AS n, (SELECT count(*) FROM triage.main.results) AS everything "
                             "FROM results")
    assert code == 0, err
    assert json.loads(out) == [{"n": len(results), "everything": sum(len(r["retention"]["results"]) for r in reports)}]


def test_where_tool_and_two_values_of_one_field(capsys, corpus) -> None:
    db, reports = corpus
    tool = "exec_command"
    matching = [result for r in reports for result in r["retention"]["results"] if result["tool"] == tool]
    answers = _answers(capsys, db, "--where", f"tool={tool}")
    assert [t["tool"] for t in answers["tools"]] == [tool]
    assert answers["totals"]["results"] == len(matching)
    either = [r for r in reports if r["source"]["agent"] in ("claude", "gemini")]
    answers = _answers(capsys, db, "--where", "agent=claude", "agent=gemini")
    assert answers["totals"]["results"] == sum(len(r["retention"]["results"]) for r in either)
    assert {a["agent"] for a in answers["totals"]["agents"]} == {"claude", "gemini"}


def test_since_and_until_compare_instants(capsys, corpus) -> None:
    db, reports = corpus
    timed = sorted((_utc(r["source"]["started"]), r) for r in reports if r["source"]["started"])
    cut = timed[len(timed) // 2][0]
    after = [r for moment, r in timed if moment >= cut]
    before = [r for moment, r in timed if moment < cut]
    since = _answers(capsys, db, "--since", cut.isoformat() + "Z")
    until = _answers(capsys, db, "--until", cut.isoformat() + "+00:00")
    assert since["totals"]["results"] == sum(len(r["retention"]["results"]) for r in after)
    assert until["totals"]["results"] == sum(len(r["retention"]["results"]) for r in before)
    assert since["filters"] == [f"started at or after {cut:%Y-%m-%d %H:%M:%S} UTC"]
    day = _answers(capsys, db, "--since", f"{cut:%Y-%m-%d}", "--until", f"{cut:%Y-%m-%d}")  # that whole day
    same_day = [r for moment, r in timed if moment.date() == cut.date()]
    assert day["totals"]["results"] == sum(len(r["retention"]["results"]) for r in same_day)


def test_a_label_given_with_a_scan_filters_later(capsys, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    codex, claude = RECORDINGS / "codex", RECORDINGS / "claude"
    assert scan(capsys, db, codex, "--label", "ticket=42", "customer=acme", "-o", tmp_path / "a.txt")[0] in (0, 3)
    assert scan(capsys, db, claude, "--label", "ticket=43", "-o", tmp_path / "b.txt")[0] in (0, 3)
    assert table(db, "SELECT key, value FROM scan_labels ORDER BY ALL") == [
        ("customer", "acme"), ("ticket", "42"), ("ticket", "43")]
    labelled = _answers(capsys, db, "--label", "ticket=42")
    assert {a["agent"] for a in labelled["totals"]["agents"]} == {"codex"}
    assert labelled["totals"]["sessions"] == table(db, "SELECT count(*) FROM sessions WHERE agent = 'codex'")[0][0]
    assert _answers(capsys, db, "--label", "ticket=42", "customer=other")["totals"]["sessions"] == 0
    both = _answers(capsys, db, "--label", "ticket=42", "ticket=43")["totals"]["sessions"]
    assert both == table(db, "SELECT count(*) FROM sessions")[0][0]


def test_bad_filters_are_one_line_and_write_nothing(capsys, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    for args, words in ((("--since", "yesterday"), "'yesterday': expected a date"),
                        (("--where", "colour=red"), "unknown field 'colour'"),
                        (("--where", str(RECORDINGS / "codex")), "expected KEY=VALUE"),
                        (("--label", "ticket"), "expected KEY=VALUE")):
        code, out, err = scan(capsys, db, RECORDINGS / "codex", *args)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert not db.exists()


def test_context_window_share_where_the_session_states_the_window(capsys, corpus, tmp_path: Path) -> None:
    """Codex rollouts state the model's window: the share stored and shown is `doctor memory --json`'s, for
    a session file and for its pasted report; the others say nothing (no window is guessed from a name)."""
    db, reports = corpus
    def window(report: dict) -> dict | None:
        return (report.get("agentMeasure") or {}).get("contextWindow")

    stated = {(r["source"]["sessionId"], window(r)["tokens"], window(r)["share"]) for r in reports if window(r)}
    assert stated and {r["source"]["agent"] for r in reports if window(r)} == {"codex"}
    stored = set(table(db, "SELECT session_id, context_window_tokens, context_window_share FROM sessions "
                           "WHERE context_window_share IS NOT NULL"))
    assert stored == stated
    session_id, tokens, share = max(stated, key=lambda row: row[2])
    answers = _answers(capsys, db, "--where", f"session={session_id}")
    assert [(row["context_window_tokens"], row["context_window_share"]) for row in answers["sessionsAtRisk"]] == \
        [(tokens, share)]
    code, out, err = run_cli(capsys, "scan", "--db", db, "--where", f"session={session_id}")
    from doctor.report.window import percent

    assert f"{percent(share)} of {tokens:,}" in out
    report = next(r for r in reports if r["source"]["sessionId"] == session_id)
    pasted = tmp_path / "pasted.json"
    pasted.write_text(json.dumps(report))
    pasted_db = tmp_path / "pasted.duckdb"
    assert scan(capsys, pasted_db, pasted, "-o", tmp_path / "a.txt")[0] == 0
    assert table(pasted_db, "SELECT context_window_tokens, context_window_share FROM sessions") == [(tokens, share)]
