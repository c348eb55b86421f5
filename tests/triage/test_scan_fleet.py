"""The Fleet screen (`doctor scan --tui`) driven by its keys with Textual's Pilot, on a database of real
recordings: sort, filter, a tool's histogram, enter opens the session in the memory screen, escape returns."""

from __future__ import annotations

import asyncio
import bisect
import io
from collections import Counter
from pathlib import Path

from rich.console import Console
from triage_support import RECORDINGS, run_cli, table

from doctor.triage.bins import BOUNDS
from doctor.triage.fleet import load_fleet, session_provider
from doctor.triage.store import Store
from doctor.tui.app import DoctorApp
from doctor.tui.screens.fleet import FleetScreen, SessionScreen

SIZE = (140, 40)


def _fleet(capsys, tmp_path: Path, style: str = "full"):
    db = tmp_path / f"{style}.duckdb"
    assert run_cli(capsys, "scan", "--db", db, "--jobs", "1", "--paths", style, RECORDINGS / "qwen",
                   RECORDINGS / "codex", "-o", tmp_path / "out.txt")[0] == 0
    store = Store(db, read_only=True)
    try:
        return db, load_fleet(store)
    finally:
        store.close()


def _text(widget) -> str:
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.export_text()


async def _settle(pilot, condition, tries: int = 200) -> None:
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    assert condition()


def test_sort_filter_histogram_open_and_back(capsys, tmp_path: Path) -> None:
    db, data = _fleet(capsys, tmp_path)

    async def journey() -> None:
        app = DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            sessions = screen.query_one("#fleet-sessions")
            assert sessions.row_count == table(db, "SELECT count(*) FROM sessions")[0][0]

            for _ in range(6):  # path, agent, version, results, tokens, oversized
                await pilot.press("s")
            assert sessions.sort_column == "oversized" and sessions.sort_reverse
            shown = [sessions.values[key]["oversized"] or 0 for key in sessions.order()]
            assert shown == sorted(shown, reverse=True) and shown[0] > 0
            await pilot.press("r")
            shown = [sessions.values[key]["oversized"] or 0 for key in sessions.order()]
            assert shown == sorted(shown)

            await pilot.press("slash", *"codex")
            codex = table(db, "SELECT count(*) FROM sessions WHERE lower(path || agent || coalesce(agent_version, '')) "
                              "LIKE '%codex%'")[0][0]
            assert 0 < sessions.row_count == codex
            await pilot.press("enter")  # back to the table, filter kept
            assert app.focused is sessions

            tools = screen.query_one("#fleet-tools")
            tools.focus()
            await pilot.press("down")
            name = tools.highlighted_key()
            values = [row[0] for row in table(db, "SELECT injected_chars FROM results WHERE tool = ?".replace(
                "?", "'" + name.replace("'", "''") + "'"))]
            bins = Counter(bisect.bisect_left(BOUNDS, value) for value in values)
            lines = _text(screen.query_one("#fleet-histogram")).strip().splitlines()
            assert lines[0].startswith(name)
            assert [int(line.rsplit(" ", 1)[1].replace(",", "")) for line in lines[1:]] == \
                [bins.get(k, 0) for k in range(min(bins), max(bins) + 1)]

            sessions.focus()
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await _settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.report is not None)
            report = app.screen.report
            assert report.source.path == screen.opened and report.source.agent == "codex"
            await pilot.press("escape")
            assert app.screen is screen

    asyncio.run(journey())


def test_a_short_path_cannot_be_opened_and_says_so(capsys, tmp_path: Path) -> None:
    _, data = _fleet(capsys, tmp_path, style="short")

    async def journey() -> None:
        app = DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is screen and screen.opened is None
            assert any("--paths full" in str(n.message) for n in app._notifications)

    asyncio.run(journey())


def test_scan_tui_hands_the_database_to_the_fleet_screen(capsys, tmp_path: Path, monkeypatch) -> None:
    """The CLI seam: `doctor scan --tui` scans, then runs the Fleet app on what the database holds."""
    import doctor.tui

    seen = []
    monkeypatch.setattr(doctor.tui, "run_fleet_app", lambda data, opener: seen.append((data, opener)))
    db = tmp_path / "t.duckdb"
    code, out, _ = run_cli(capsys, "scan", "--db", db, "--jobs", "1", "--tui", RECORDINGS / "qwen" / "errors" / "session.jsonl")
    assert code == 0 and out == ""
    [(data, opener)] = seen
    assert [s["path"] for s in data.sessions] == [row[0] for row in table(db, "SELECT path FROM sessions")]
    assert opener is session_provider


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def test_help_sort_arrows_end_and_the_filter_reaches_title_and_tools(capsys, tmp_path: Path) -> None:
    from doctor.tui.screens.help import HelpScreen

    db, data = _fleet(capsys, tmp_path)

    async def journey() -> None:
        app = DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            sessions = screen.query_one("#fleet-sessions")
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            shown = "\n".join(_text(widget) for widget in app.screen.query("Static"))
            assert "doctor scan --tui shows the sessions" in shown and "Overview (1)" not in shown
            assert "fleet.sort" in shown and "memory.biggest" not in shown
            await pilot.press("escape")
            assert app.screen is screen

            for _ in range(5):  # path, agent, version, results, tokens
                await pilot.press("s")
            labels = {column.key.value: column.label.plain for column in sessions.columns.values()}
            assert labels["retained_tokens"] == "Tokens ↓" and labels["oversized"] == "Oversized"
            await pilot.press("r")
            assert sessions.columns["retained_tokens"].label.plain == "Tokens ↑"
            await pilot.press("end")
            assert sessions.cursor_row == sessions.row_count - 1 > 0
            await pilot.press("home")
            assert sessions.cursor_row == 0

            await pilot.press("slash", *"codex", "enter")
            matching = "lower(path || ' ' || coalesce(session_id, '') || ' ' || agent || ' ' || " \
                       "coalesce(agent_version, '')) LIKE '%codex%'"
            total = table(db, "SELECT count(*) FROM sessions")[0][0]
            kept = table(db, f"SELECT count(*) FROM sessions WHERE {matching}")[0][0]
            assert 0 < kept < total == len(data.sessions)
            title = _text(screen.query_one("#title"))
            assert f"{kept:,} of {total:,} sessions match “codex”" in title
            expected = dict(table(db, f"SELECT tool, count(*) FROM results JOIN sessions USING (session_key) "
                                      f"WHERE {matching} GROUP BY tool"))
            tools = screen.query_one("#fleet-tools")
            assert {key: tools.values[key]["results"] for key in tools.order()} == expected
            assert f"{len(expected):,} tool{'' if len(expected) == 1 else 's'}," in title

    asyncio.run(journey())


def test_enter_opens_an_archive_member_or_says_why_not(capsys, tmp_path: Path) -> None:
    import tarfile

    archive = tmp_path / "ticket.tar.gz"
    session = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(session, arcname="home/.qwen/chats/session.jsonl")
    for style in ("full", "short"):
        db = tmp_path / f"{style}.duckdb"
        assert run_cli(capsys, "scan", "--db", db, "--paths", style, archive, "-o", tmp_path / "a.txt")[0] == 0
        store = Store(db, read_only=True)
        data = load_fleet(store)
        store.close()
        [(path, results)] = table(db, "SELECT path, tool_results FROM sessions")

        async def journey() -> None:
            app = DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))
            async with app.run_test(size=SIZE) as pilot:
                screen = app.screen
                await pilot.press("enter")
                await app.workers.wait_for_complete()
                if style == "full":
                    assert path == f"{archive}!home/.qwen/chats/session.jsonl"
                    await _settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.report)
                    assert app.screen.report.qwen_stats.tool_result_count == results
                else:
                    await pilot.pause()
                    assert app.screen is screen
                    [note] = [str(n.message) for n in app._notifications]
                    assert "stored shortened" in note and "--paths full" in note

        asyncio.run(journey())


def test_at_80_by_24_every_column_fits_and_nothing_wraps(capsys, tmp_path: Path) -> None:
    _, data = _fleet(capsys, tmp_path)

    async def journey() -> None:
        app = DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.2)
            screen = app.screen
            for name, count in (("#fleet-sessions", 7), ("#fleet-tools", 4)):
                widget = screen.query_one(name)
                used = sum(column.get_render_width(widget) for column in widget.columns.values())
                assert len(widget.columns) == count and used <= widget.size.width, (name, used, widget.size)
                assert widget.size.height >= 6, (name, widget.size)  # rows to read, not a collapsed strip
            panel = screen.query_one("#fleet-histogram")
            tool = next(t for t in screen.tools if t["tool"] == screen.query_one("#fleet-tools").highlighted_key())
            console = Console(width=panel.content_region.width, record=True, file=io.StringIO(), color_system=None)
            console.print(panel.content)
            lines = console.export_text().rstrip("\n").splitlines()
            counts = [count for _, count in tool["bins"]]
            assert len(lines) == 2 + max(b for b, _ in tool["bins"]) - min(b for b, _ in tool["bins"])  # none wrapped
            assert [int(line.rsplit(" ", 1)[1].replace(",", "")) for line in lines[1:] if line.split()[-1] != "0"] \
                == [count for count in counts if count], lines

    asyncio.run(journey())
