"""Snapshot tests: SVGs in the top-level snapshots/ (see conftest), fixed size, data and time.

Update only after looking at the report: `pytest tests/tui --snapshot-update` with the
versions pinned in conftest.SNAPSHOT_VERSIONS.
"""

from __future__ import annotations

from doctor.tui.app import DoctorApp
from doctor.tui.provider import StaticProvider
from doctor.tui.widgets.pager_view import PagerView

from tests.tui.helpers import build, relative_session


def app_for(name: str, theme: str = "dark") -> DoctorApp:
    report, session = build(relative_session(name))
    return DoctorApp(StaticProvider(report, session=session), theme=theme, keymap={})


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def after_keys(*keys):
    """A `run_before`: wait for the report, press `keys`, wait for what they started."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return run_before


async def until_pager_ready(pilot) -> None:
    for _ in range(100):
        await pilot.pause(0.02)
        screen = pilot.app.screen
        views = screen.query(PagerView)
        if views and not screen.indexing and views.first().line_text(0) is not None:
            break
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen.tick_status()
    await pilot.pause()


def test_overview_80x24(snap_compare):
    assert snap_compare(app_for("oversized-alarm"), terminal_size=(80, 24), run_before=settle)


def test_overview_light_200x60(snap_compare):
    assert snap_compare(app_for("batch-budget", theme="light"), terminal_size=(200, 60), run_before=settle)


def test_results_oversized_only_80x24(snap_compare):
    assert snap_compare(app_for("oversized-alarm"), terminal_size=(80, 24), run_before=after_keys("3", "o"))


def test_result_detail_120x40(snap_compare):
    assert snap_compare(app_for("batch-budget"), terminal_size=(120, 40), run_before=after_keys("b"))


def test_pager_search_80x24(snap_compare):
    async def run_before(pilot):
        await after_keys("b")(pilot)
        await pilot.press("enter")
        await until_pager_ready(pilot)
        await pilot.press("slash", *"exit", "enter")
        await until_pager_ready(pilot)

    assert snap_compare(app_for("batch-budget"), terminal_size=(80, 24), run_before=run_before)


def test_help_80x24(snap_compare):
    assert snap_compare(app_for("batch-budget"), terminal_size=(80, 24), run_before=after_keys("question_mark"))
