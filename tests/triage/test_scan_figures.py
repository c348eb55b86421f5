"""Figures of `doctor scan`'s answers that must mean one thing: growth per turn (the n-th prompt the
person typed, counted over the sessions that reached it), versions in version order, a --compare value
that matches nothing, and totals that add up. Through the CLI, on real recordings; expected figures from
`doctor memory --json` on the same files and from the recordings' scripts."""

from __future__ import annotations

import json
from pathlib import Path

from triage_support import RECORDINGS, memory_json, run_cli

# Each scripted model's text-only step ends one prompt's turn: these recordings had that many prompts.
TYPED = {
    RECORDINGS / "qwen" / "multi-turn" / "session.jsonl": 3,
    RECORDINGS / "qwen" / "errors" / "session.jsonl": 1,
    next((RECORDINGS / "codex" / "big-outputs" / "home").rglob("rollout-*.jsonl")): 1,
}


def _prompts_in_script(session: Path) -> int:
    folder = next(parent for parent in session.parents if (parent / "script.json").exists())
    return sum(1 for step in json.loads((folder / "script.json").read_text())["steps"] if isinstance(step, str))


def test_growth_per_turn_counts_the_sessions_that_reached_each_prompt(capsys, tmp_path: Path) -> None:
    assert {path: _prompts_in_script(path) for path in TYPED} == TYPED
    per_turn: dict[int, list[float]] = {}
    for path in TYPED:
        for row in memory_json(capsys, path)["retention"]["perTurn"]:
            per_turn.setdefault(row["turn"], []).append(row["chars"])
    code, out, err = run_cli(capsys, "scan", "--db", tmp_path / "t.duckdb", "--jobs", "1", "--json", *TYPED)
    assert code == 0, err
    growth = json.loads(out)["charts"]["growthPerTurn"]
    expected = []
    for turn in range(0, max(TYPED.values()) + 1):
        reached = sum(1 for prompts in TYPED.values() if prompts >= turn)
        chars = per_turn.get(turn, [])
        if turn == 0 and not chars:
            continue
        expected.append({"turn": turn, "sessions_reached": reached, "sessions_with_results": len(chars),
                         "chars": sum(chars), "chars_per_session_reached": round(sum(chars) / reached, 1)})
    assert growth == expected
    assert [row["sessions_reached"] for row in growth if row["turn"] > 0] == [3, 1, 1]
    code, text, _ = run_cli(capsys, "scan", "--db", tmp_path / "t.duckdb")
    section = " ".join(text[text.index("Growth per turn"):].split())
    assert "Sessions that reached it" in section and "With results in it" in section
