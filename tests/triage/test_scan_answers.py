"""The answers of `doctor scan`, checked against figures computed here, independently of the SQL, from
`doctor memory --json --results` of the same real sessions (nearest-rank percentiles, plain sums)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from triage_support import run_cli

TOP = 50


def _answers(capsys, db: Path, *extra) -> dict:
    code, out, err = run_cli(capsys, "scan", "--db", db, "--json", "--top", TOP, *extra)
    assert code == 0, err
    return json.loads(out)


def _nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def test_tools_ranked_by_injected_context(capsys, corpus) -> None:
    db, reports = corpus
    chars, tokens, oversized = defaultdict(list), defaultdict(list), defaultdict(int)
    for report in reports:
        for result in report["retention"]["results"]:
            chars[result["tool"]].append(result["chars"])
            tokens[result["tool"]].append(result["tokens"])
            oversized[result["tool"]] += result["oversized"]
    expected = sorted(chars, key=lambda tool: (-sum(chars[tool]), tool))[:TOP]
    tools = _answers(capsys, db)["tools"]
    assert [row["tool"] for row in tools] == expected
    for row in tools:
        values = chars[row["tool"]]
        assert (row["results"], row["chars"], row["chars_max"], row["tokens"], row["oversized"]) == (
            len(values), sum(values), max(values), sum(tokens[row["tool"]]), oversized[row["tool"]])
        assert [row["chars_p50"], row["chars_p90"], row["chars_p99"]] == [_nearest_rank(values, q) for q in (.5, .9, .99)]
        assert row["tokens_p90"] == _nearest_rank(tokens[row["tool"]], .9)


def test_oversized_per_thousand_by_tool_and_version(capsys, corpus) -> None:
    db, reports = corpus
    groups = defaultdict(lambda: [0, 0])
    for report in reports:
        source = report["source"]
        for result in report["retention"]["results"]:
            group = groups[result["tool"], source["agent"], source["agentVersion"] or "unknown"]
            group[0] += 1
            group[1] += result["oversized"]
    rows = _answers(capsys, db)["oversizedByVersion"]
    assert rows[0]["per_1000"] > 0
    for row in rows:
        count, over = groups[row["tool"], row["agent"], row["agent_version"]]
        assert (row["results"], row["oversized"], row["per_1000"]) == (count, over, round(1000 * over / count, 1))
    rates = [row["per_1000"] for row in rows]
    assert rates == sorted(rates, reverse=True)


def test_layer_shares_and_raw_vs_injected(capsys, corpus) -> None:
    db, reports = corpus
    per_agent = defaultdict(lambda: defaultdict(int))
    raw, injected = defaultdict(int), defaultdict(float)
    for report in reports:
        for result in report["retention"]["results"]:
            per_agent[report["source"]["agent"]][result["layer"]] += 1
            raw[result["tool"]] += result["rawChars"]
            injected[result["tool"]] += result["chars"]
    answers = _answers(capsys, db)
    for row in answers["layers"]:
        layers = per_agent[row["agent"]]
        assert row["results"] == layers[row["layer"]]
        assert row["percent"] == round(100 * layers[row["layer"]] / sum(layers.values()), 2)
    assert {(row["agent"], row["layer"]) for row in answers["layers"]} == \
        {(agent, layer) for agent, layers in per_agent.items() for layer in layers}
    for row in answers["rawVsInjected"]:
        assert (row["raw_chars"], row["injected_chars"]) == (raw[row["tool"]], injected[row["tool"]])


def test_sessions_ranked_by_risk_with_the_reason(capsys, corpus) -> None:
    db, reports = corpus
    rows = _answers(capsys, db)["sessionsAtRisk"]
    worst = max(reports, key=lambda r: r["toolResultRetention"]["oversizedResultCount"])
    assert rows[0]["oversized"] == worst["toolResultRetention"]["oversizedResultCount"] > 0
    assert rows[0]["reason"].startswith(f"{rows[0]['oversized']} oversized result")
    keys = [(-(r["oversized"] or 0), -(r["spill_findings"] or 0), -(r["retained_tokens"] or 0)) for r in rows]
    assert keys == sorted(keys)


def test_compare_two_agent_versions(capsys, corpus) -> None:
    db, reports = corpus
    a, b = "2.1.39", "2.1.332"
    compared = _answers(capsys, db, "--compare", f"agent_version={a},{b}")["compare"]
    for side, value in (("a", a), ("b", b)):
        chosen = [r for r in reports if r["source"]["agentVersion"] == value]
        values = [result["chars"] for r in chosen for result in r["retention"]["results"]]
        assert chosen and compared[side]["sessions"] == len(chosen) and compared[side]["results"] == len(values)
        assert compared[side]["chars_p90"] == _nearest_rank(values, .9)
    both = {t["tool"]: t for t in compared["tools"]}
    tools_a = {res["tool"] for r in reports if r["source"]["agentVersion"] == a for res in r["retention"]["results"]}
    tools_b = {res["tool"] for r in reports if r["source"]["agentVersion"] == b for res in r["retention"]["results"]}
    assert set(both) == tools_a | tools_b
    assert {tool for tool, t in both.items() if t["change"] == "new"} == tools_b - tools_a
    assert {tool for tool, t in both.items() if t["change"] == "gone"} == tools_a - tools_b
    code, _, err = run_cli(capsys, "scan", "--db", db, "--compare", "nonsense=1,2")
    assert code == 2 and "unknown field" in err


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_format_shows_the_same_ranking(capsys, corpus, fmt) -> None:
    db, _ = corpus
    tools = _answers(capsys, db)["tools"]
    code, out, _ = run_cli(capsys, "scan", "--db", db, "--format", fmt, "--top", TOP)
    assert code == 0
    for title in ("Tools by injected context", "Oversized per 1,000 results", "Which layer bounded each result",
                  "Raw vs injected", "Sessions by risk", "Skipped files" if "Skipped" in out else "Scan"):
        assert title in out
    top = tools[0]
    name = top["tool"].replace("_", "\\_") if fmt == "markdown" else top["tool"]
    assert name in out and f"{int(top['chars']):,}" in out and f"{int(top['chars_p90']):,}" in out
    if fmt == "html":
        assert "<script" not in out.lower() and out.startswith("<!DOCTYPE html>")
