"""Pasted `doctor memory --json` reports through `doctor scan`: the source fields are always there, and
a report that is not what doctor publishes is refused naming the field and the value. Reports are
made by `doctor memory` on a real recording, then edited the way a hand or a script would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from triage_support import RECORDINGS, memory_json, run_cli, table

SESSION = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"
SOURCE_FACTS = ("agentVersion", "projectHash", "sizeBytes", "records")


def _report(capsys, target: Path, *extra) -> dict:
    code, _, err = run_cli(capsys, "memory", SESSION, "--json", *extra, "-o", target)
    assert code in (0, 3), err
    return json.loads(target.read_text())


def test_a_report_without_results_carries_the_source_facts(capsys, tmp_path: Path) -> None:
    plain = _report(capsys, tmp_path / "plain.json")
    full = memory_json(capsys, SESSION, "--results")
    assert {key: plain["source"][key] for key in SOURCE_FACTS} == {key: full["source"][key] for key in SOURCE_FACTS}
    assert plain["source"]["agentVersion"] == "0.24.4" and "results" not in plain["retention"]

    db = tmp_path / "t.duckdb"
    code, out, err = run_cli(capsys, "scan", "--db", db, "--jobs", "1", tmp_path / "plain.json")
    assert code == 0, err
    assert table(db, "SELECT agent, agent_version, project_hash, size_bytes, records FROM sessions") == [
        ("qwen", "0.24.4", full["source"]["projectHash"], SESSION.stat().st_size, full["source"]["records"])]
    assert "1 session without per-result rows" in " ".join(out.split())
    code, out, _ = run_cli(capsys, "scan", "--db", db, "--json")
    assert json.loads(out)["totals"]["without_result_rows"] == 1


def _edited(report: dict, edit) -> dict:
    report = json.loads(json.dumps(report))
    edit(report)
    return report


def _results(report: dict) -> list:
    return report["retention"]["results"]


EDITS = {
    "duplicated ordinal": (lambda r: _results(r)[1].update(ordinal=_results(r)[0]["ordinal"]),
                           "$.retention.results[1].ordinal is 0"),
    "chars 1e308": (lambda r: _results(r)[0].update(chars=1e308), "$.retention.results[0].chars is 1e+308"),
    "schemaVersion 99": (lambda r: r.update(schemaVersion=99), "$.schemaVersion is 99 (expected 1)"),
    "source null": (lambda r: r.update(source=None), "$.source is None (expected object)"),
    "a count as a string": (lambda r: _results(r)[0].update(rawChars="12"), "$.retention.results[0].rawChars is '12'"),
    "oversized count as a string": (lambda r: r["toolResultRetention"].update(oversizedResultCount="2"),
                                    "$.toolResultRetention.oversizedResultCount is '2'"),
}


@pytest.mark.parametrize("name", EDITS)
def test_a_report_that_breaks_the_schema_is_refused_naming_field_and_value(capsys, tmp_path: Path, name: str) -> None:
    edit, named = EDITS[name]
    good = _report(capsys, tmp_path / "good.json", "--results")
    bad = tmp_path / "inbox" / "bad.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(_edited(good, edit)))
    db = tmp_path / "t.duckdb"
    code, out, err = run_cli(capsys, "scan", "--db", db, "--jobs", "1", "--json", bad.parent)
    assert code == 3, err
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == 0, "nothing of the report is stored"
    reasons = [row["reason"] for row in json.loads(out)["totals"]["skipped"]]
    assert len(reasons) == 1 and named in reasons[0], reasons
    assert "internal error" not in reasons[0]


def test_the_size_qwens_persistence_gate_declares_is_stored_in_its_unit(capsys, tmp_path: Path) -> None:
    """Qwen's stub says "Output too large (61 KB)": the answers carry 61 KB, not "—" (chars it never states)."""
    import re

    session = RECORDINGS / "qwen" / "persist-gate" / "session.jsonl"
    declared = sorted(int(kb) for kb in set(re.findall(r"Output too large \((\d+) KB\)", session.read_text())))
    assert declared, "the recording holds a persistence-gate stub"
    db = tmp_path / "t.duckdb"
    code, out, err = run_cli(capsys, "scan", "--db", db, "--jobs", "1", "--json", session)
    assert code == 0, err
    data = json.loads(out)
    gate = [row for row in data["layers"] if row["layer"] == "persistence gate"]
    assert [(row["agent"], row["declared_kb"], row["declared_chars"]) for row in gate] == [("qwen", sum(declared), None)]
    assert sorted(v for v, in table(db, "SELECT declared_kb FROM results WHERE declared_kb IS NOT NULL")) == declared
    code, text, _ = run_cli(capsys, "scan", "--db", db)
    layers = text[text.index("Which layer bounded"):text.index("Raw vs injected")]
    assert "Declared KB" in layers and any(
        "persistence gate" in line and line.split()[-1] == str(sum(declared)) for line in layers.splitlines())
