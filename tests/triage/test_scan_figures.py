"""Figures of `doctor scan`'s answers that must mean one thing: growth per turn (the n-th prompt the
person typed, counted over the sessions that reached it), versions in version order, a --compare value
that matches nothing, and totals that add up. Through the CLI, on real recordings; expected figures from
`doctor memory --json` on the same files and from the recordings' scripts."""

from __future__ import annotations

import json
from pathlib import Path

from triage_support import RECORDINGS, memory_json, run_cli, table

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


CODEX = next((RECORDINGS / "codex" / "big-outputs" / "home").rglob("rollout-*.jsonl"))


def _json(capsys, *args) -> dict:
    code, out, err = run_cli(capsys, "scan", "--jobs", "1", "--json", *args)
    assert code == 0, err
    return json.loads(out)


def test_versions_sort_as_versions_and_a_missing_one_is_unknown(capsys, tmp_path: Path) -> None:
    """Codex 0.171.0 and a report of the same recording edited to say 0.47.0 (another session id):
    as text "0.171.0" < "0.47.0"; as versions 0.47.0 comes first. Gemini states no version."""
    report = memory_json(capsys, CODEX, "--results")
    report["source"].update(agentVersion="0.47.0", sessionId="another-session")
    older = tmp_path / "older.json"
    older.write_text(json.dumps(report))
    gemini = next((RECORDINGS / "gemini" / "big-outputs" / "home").rglob("session-*.jsonl"))
    data = _json(capsys, "--db", tmp_path / "t.duckdb", CODEX, older, gemini)
    rates = [(row["agent"], row["agent_version"]) for row in data["charts"]["oversizedRateByVersion"]]
    assert rates == [("codex", "0.47.0"), ("codex", "0.171.0"), ("gemini", "unknown")]
    assert ("gemini", "unknown") in [(row["agent"], row["agent_version"]) for row in data["totals"]["agents"]]


def test_the_fleet_sorts_versions_as_versions(capsys, tmp_path: Path) -> None:
    import asyncio

    from doctor.triage.fleet import load_fleet, session_provider
    from doctor.triage.store import Store
    from doctor.tui.app import DoctorApp
    from doctor.tui.screens.fleet import FleetScreen

    db = tmp_path / "t.duckdb"
    _json(capsys, "--db", db, RECORDINGS / "qwen" / "errors" / "session.jsonl", CODEX)
    store = Store(db, read_only=True)
    try:
        data = load_fleet(store)
    finally:
        store.close()

    async def journey() -> list:
        app = DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))
        async with app.run_test(size=(140, 40)) as pilot:
            sessions = app.screen.query_one("#fleet-sessions")
            for _ in range(3):  # path, agent, version
                await pilot.press("s")
            assert sessions.sort_column == "agent_version"
            return [sessions.values[key]["agent_version"] for key in sessions.order()]

    assert asyncio.run(journey()) == ["0.24.4", "0.171.0"]


def test_a_compare_value_that_matches_nothing_says_so(capsys, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    _json(capsys, "--db", db, RECORDINGS / "qwen" / "errors" / "session.jsonl", CODEX)
    data = _json(capsys, "--db", db, "--compare", "agent_version=9.9,0.24.4")["compare"]
    assert data["unmatched"] == ["9.9"] and data["tools"] == [] and data["a"]["sessions"] == 0
    code, text, _ = run_cli(capsys, "scan", "--db", db, "--compare", "agent_version=9.9,0.24.4")
    text = " ".join(text.split())
    assert "agent_version=9.9 matches no session in the database" in text and "0.24.4, 0.171.0" in text
    assert "new" not in text[text.index("Compare agent_version"):text.index("matches no session") + 200]


def test_totals_add_up_to_the_sessions_own_figures(capsys, tmp_path: Path) -> None:
    sessions = [RECORDINGS / "qwen" / name / "session.jsonl" for name in ("errors", "multi-turn", "rewind")]
    reports = [memory_json(capsys, path) for path in sessions]
    db = tmp_path / "t.duckdb"
    data = _json(capsys, "--db", db, *sessions, "--compare", "agent=qwen,codex")
    assert data["totals"]["tokens"] == sum(report["retention"]["totalTokens"] for report in reports)
    assert data["totals"]["injected_chars"] == sum(r["toolResultRetention"]["totalChars"] for r in reports)
    tokens_per_session = data["compare"]["a"]["tokens_per_session"]
    assert tokens_per_session == round(data["totals"]["tokens"] / 3) and isinstance(tokens_per_session, int)
    code, markdown, _ = run_cli(capsys, "scan", "--db", db, "--format", "markdown")
    assert "| 0.24.4 |" in markdown and "0\\.24" not in markdown


def test_an_archive_scan_counts_its_members(capsys, tmp_path: Path) -> None:
    import tarfile

    archive = tmp_path / "sessions.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(RECORDINGS / "qwen" / "errors" / "session.jsonl", "a/session.jsonl")
        tar.add(RECORDINGS / "qwen" / "rewind" / "session.jsonl", "b/session.jsonl")
        tar.add(RECORDINGS / "qwen" / "rewind" / "meta.json", "b/meta.json")
    code, out, err = run_cli(capsys, "scan", "--db", tmp_path / "t.duckdb", "--jobs", "1", archive)
    assert code == 0, err  # meta.json is read and found to be no session: not a skip
    assert "1 file seen and 3 archive members read from them; 1 new" in " ".join(out.split())
    assert "1 not sessions" in " ".join(out.split())


def test_a_broken_zip_is_judged_as_a_zip(capsys, tmp_path: Path) -> None:
    """A file named .zip that is no zip is reported in zip's words, not tar's ReadError."""
    import zipfile

    broken = tmp_path / "inbox" / "broken.zip"
    broken.parent.mkdir()
    with zipfile.ZipFile(broken, "w") as archive:
        archive.write(RECORDINGS / "qwen" / "errors" / "session.jsonl", "session.jsonl")
    broken.write_bytes(broken.read_bytes()[:100])  # cut short, as an interrupted download leaves it
    code, out, err = run_cli(capsys, "scan", "--db", tmp_path / "t.duckdb", "--jobs", "1", "--json", broken.parent)
    assert code == 3, err
    [skipped] = json.loads(out)["totals"]["skipped"]
    assert skipped["reason"].startswith("not a readable zip archive (") and "tar" not in skipped["reason"]


def test_the_scan_does_not_read_the_ui_history_it_stores_nothing_of(capsys, tmp_path: Path, monkeypatch) -> None:
    """`doctor scan` stores no UI-history figure, so its job leaves the UI history unread (on the
    benchmark corpus, a tenth of the reader's work): a session whose UI history cannot be read scans
    to the figures `doctor memory` gives of it."""
    from doctor.sources.base import LoadedSession

    path = RECORDINGS / "qwen" / "ui-history" / "session.jsonl"
    retention = memory_json(capsys, path)["toolResultRetention"]

    def unreadable(session) -> None:
        raise RuntimeError("the scan read the UI history")

    monkeypatch.setattr(LoadedSession, "ui_history_to_measure", unreadable)
    data = _json(capsys, "--db", tmp_path / "t.duckdb", path)
    assert data["totals"]["injected_chars"] == retention["totalChars"] > 0
    assert table(tmp_path / "t.duckdb", "SELECT status, tool_results, oversized FROM files JOIN sessions "
                 "ON file_key = session_key") == [("ok", retention["toolResultCount"], retention["oversizedResultCount"])]
