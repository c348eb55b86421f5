"""The memory screen's What-if tab, driven with Pilot: type a budget, the figures and the largest results follow."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from doctor.tui.app import DoctorApp
from doctor.tui.provider import StaticProvider

from tests.tui.helpers import OPTIONS, build, relative_session
from tests.tui.test_journeys import run_async
from tests.tui.test_snapshots import settle


def app_for(name: str) -> DoctorApp:
    report, session = build(relative_session(name))
    return DoctorApp(StaticProvider(report, session=session, options=OPTIONS), keymap={})


async def try_budget(pilot, text: str) -> None:
    await settle(pilot)
    await pilot.press("5")
    await pilot.pause()
    await pilot.press(*text, "enter")
    await settle(pilot)


@run_async
async def test_a_budget_typed_in_the_what_if_tab_updates_figures_and_largest_results():
    app = app_for("batch-budget")  # eight parallel shell outputs, 213,660 chars: the 200,000 budget cut six
    async with app.run_test(size=(120, 40)) as pilot:
        await try_budget(pilot, "tools.toolOutputBatchBudget=-1")
        pane = app.screen.query_one("#whatif-pane")
        whatif = pane.whatif
        assert whatif is not None and whatif.saved()["exact"]
        figures = str(app.screen.query_one("#whatif-figures", Static).render())
        before, after = whatif.before.qwen_stats.total_chars, whatif.after.qwen_stats.total_chars
        assert f"{before:,}" in figures and f"{after:,}" in figures and after > before  # no budget: all kept whole
        assert "costs" in figures
        table = app.screen.query_one("#whatif-largest", DataTable)
        assert table.row_count == 8
        largest = table.get_row_at(0)
        assert largest[3] == "29,645" and largest[4] == "none"  # the 29,500-char print, whole, as Qwen gave it alone
        # Another budget replaces the rows (the session is read once).
        await pilot.press("ctrl+a", "ctrl+k")
        await pilot.press(*"tools.toolOutputBatchBudget=100000", "enter")
        await settle(pilot)
        assert pane.whatif is not whatif and pane.whatif.after.qwen_stats.total_chars < before
        assert table.get_row_at(0)[4] == "batch budget"


@run_async
async def test_an_unknown_key_is_said_in_the_pane():
    app = app_for("batch-budget")
    async with app.run_test(size=(120, 40)) as pilot:
        await try_budget(pilot, "bashOutputMaxChars=1")
        text = str(app.screen.query_one("#whatif-figures", Static).render())
        assert "has no limit 'bashOutputMaxChars'" in text and "tools.truncateToolOutputThreshold" in text


def test_what_if_tab_120x40(snap_compare):
    async def run_before(pilot):
        await try_budget(pilot, "tools.toolOutputBatchBudget=100000")

    assert snap_compare(app_for("batch-budget"), terminal_size=(120, 40), run_before=run_before)
