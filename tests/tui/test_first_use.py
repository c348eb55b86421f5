"""What a first-time user hit in the TUI (issue 15), each driven through the keys the user pressed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from doctor.tui.widgets.overview import Overview
from doctor.tui.widgets.process import ProcessPane

from tests.tui.test_journeys import app_for, loaded, run_async, text_of, wait_for

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings" / "qwen"


@run_async
async def test_process_keys_work_as_soon_as_the_tab_is_shown():
    """`4` then `p` / `t`: the keys the Process tab names act without a Tab press first."""
    app = app_for("batch-budget")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("4")
        pane = screen.query_one(ProcessPane)
        assert "No process diagnostics" in text_of(pane.query_one("#process-figures", Static))
        await pilot.press("p")
        await wait_for(pilot, lambda: "pid" in text_of(pane.query_one("#process-figures", Static)))
        await pilot.press("t")
        await wait_for(pilot, lambda: "tracemalloc" in text_of(pane.query_one("#process-sites", Static)))


@pytest.mark.parametrize("key", ["pagedown", "down", "end"])
@run_async
async def test_overview_scrolls_from_the_keyboard_at_once(key):
    """On the Overview (shown first, and again after `1`) PageDown / Down / End scroll it."""
    app = app_for("oversized-alarm")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded(pilot)
        overview = screen.query_one(Overview)
        assert overview.max_scroll_y > 0  # taller than the screen at 80x24
        await pilot.press(key)
        await wait_for(pilot, lambda: overview.scroll_y > 0)
        await pilot.press("3", "1")
        overview.scroll_home(animate=False)
        await pilot.pause()
        await pilot.press(key)
        await wait_for(pilot, lambda: overview.scroll_y > 0)


@run_async
async def test_follow_refresh_keeps_the_cursor_on_the_same_result(tmp_path):
    """`--follow` on a growing Qwen recording: the highlighted result stays the one the user chose."""
    from doctor.live.follow import FileFollower, FollowProvider
    from doctor.tui.app import DoctorApp
    from doctor.tui.screens.detail import ResultDetailScreen
    from doctor.tui.widgets.tables import ResultsTable

    lines = (RECORDINGS / "multi-turn" / "session.jsonl").read_bytes().splitlines(keepends=True)
    live = tmp_path / "s.jsonl"
    live.write_bytes(b"".join(lines[:20]))
    provider = FollowProvider(FileFollower(live), refresh_interval=0.05)
    app = DoctorApp(provider, keymap={})
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("3")
        table = screen.query_one(ResultsTable)
        first = len(table.rows)
        table.move_to("0")  # `#0 run_shell_command`, the smallest of the first results but one
        chosen = table.cursor_row
        assert table.selected_key() == "0" and chosen > 0
        with live.open("ab") as handle:
            handle.write(b"".join(lines[20:]))
        await wait_for(pilot, lambda: len(table.rows) > first)
        await pilot.pause()
        assert table.selected_key() == "0"
        assert table.cursor_row != chosen  # bigger results came in above it
        for key in ("s", "r", "s"):  # re-sorting moves the row, and the cursor with it
            await pilot.press(key)
            assert table.selected_key() == "0"
        await pilot.press("enter")
        assert isinstance(app.screen, ResultDetailScreen) and app.screen.result.ordinal == 0


@run_async
async def test_skipped_input_lines_are_shown_on_the_overview(tmp_path):
    """Two invalid lines in a Qwen recording: the banner is not a plain OK and names them by line."""
    from tests.tui.helpers import build, copy_recording
    from doctor.tui.app import DoctorApp
    from doctor.tui.provider import StaticProvider

    path = copy_recording("batch-budget", tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"uuid": "torn", "type": \n')  # becomes line 3
    lines.insert(7, b"not json at all\n")  # line 8
    path.write_bytes(b"".join(lines))
    report, session = build(path)
    assert [issue.line for issue in report.issues if issue.severity == "warning"] == [3, 8]
    app = DoctorApp(StaticProvider(report, session=session), keymap={})
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        alarm = screen.query_one("#alarm", Static)
        assert "2 parts of the input could not be read" in text_of(alarm)
        assert alarm.has_class("alarm-partial") and not alarm.has_class("alarm-off")
        problems = screen.query_one("#input-problems", Static)
        assert problems.display and problems.region.height > 0  # on screen, under the banner
        listed = text_of(problems)
        assert "session.jsonl:3: invalid JSON line" in listed and "session.jsonl:8: invalid JSON line" in listed


@run_async
async def test_clean_input_shows_no_input_problems():
    app = app_for("batch-budget")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        assert text_of(screen.query_one("#alarm", Static)).strip() == "OK  no tool result above its budget"
        assert not screen.query_one("#input-problems", Static).display
