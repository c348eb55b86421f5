"""What a first-time user hit in the TUI (issue 15), each driven through the keys the user pressed."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from doctor.tui.widgets.overview import Overview
from doctor.tui.widgets.process import ProcessPane

from tests.tui.test_journeys import app_for, loaded, text_of, wait_for, run_async


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
