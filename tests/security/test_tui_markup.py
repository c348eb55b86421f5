"""Text from data on the TUI's screens is shown as text, never read as Textual or Rich markup (issue 22, item 12).

A file name, a tool name, an archive member's stored path or an error naming one of them may hold
`[bold red]` (styling), `[@click=app.quit]` (a clickable action) or `[/nope]` (a closing tag with
no opening: MarkupError, a crash). Driven with Textual's Pilot through the seams a user takes:
`doctor memory FILE` handing the TUI its loader (the loading label names the file), a recording
whose tool names hold markup (title, tables, detail, palette), a failed load and refresh, and the
Fleet screen of a `doctor scan` database whose stored path cannot be opened here (its notification).
Each shows the literal text, with no style or action taken from it.
"""

from __future__ import annotations

import asyncio
import io
import threading
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable

from doctor.cli import main
from doctor.tui.app import DoctorApp
from doctor.tui.provider import CallableProvider, StaticProvider
from doctor.tui.screens.detail import ResultDetailScreen
from doctor.tui.screens.memory import MemoryScreen
from tests.tui.helpers import build
from tests.tui.test_journeys import run_async, wait_for

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests/recordings/qwen/errors/session.jsonl"
SIZE = (120, 34)
# File names as a stranger's archive or repository may hold them: styling, an action. (A closing tag
# needs a "/", so only a path holds one: "a[/nope]b.jsonl" is the file "nope]b.jsonl" in the folder "a[".)
HOSTILE_NAMES = ("x[bold red]RED.jsonl", "[@click=app.quit]quit.jsonl")


def screen_text(app) -> str:
    """Every cell of the screen as plain text, as `App.export_screenshot` composes it."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), record=True,
                      color_system=None, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


def styled(content) -> list[str]:
    """The styles and actions a widget's content carries (a Text's spans, a Content's)."""
    spans = getattr(content, "spans", ())
    return [str(span.style) for span in spans if span.style]


def _hostile_copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(RECORDING.read_bytes())
    return path


def _cli_loader(monkeypatch, path: Path):
    """What `doctor memory PATH` hands the TUI: its loader and the session (the CLI seam)."""
    import doctor.commands.memory as memory
    import doctor.tui

    seen = {}
    monkeypatch.setattr(memory, "_wants_tui", lambda args: True)
    monkeypatch.setattr(doctor.tui, "run_memory_app",
                        lambda report=None, *, load=None, session=None, **kwargs: seen.update(load=load, session=session))
    assert main(["memory", str(path)]) == 0
    return seen["load"], seen["session"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@run_async
async def test_the_loading_label_and_title_show_a_file_name_as_it_is(tmp_path, monkeypatch, name):
    path = _hostile_copy(tmp_path, name)
    load, session = _cli_loader(monkeypatch, path)
    shown, release = threading.Event(), threading.Event()

    def gated(progress):
        def first(fraction, text, report=None):
            progress(fraction, text, report=report)
            if not shown.is_set():
                shown.set()
                release.wait(10)
        return load(first)

    app = DoctorApp(CallableProvider(gated, session=session), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, shown.is_set)
        await pilot.pause(0.1)
        assert f"Reading {path.name}" in screen_text(app)  # as it is, not "Reading xRED.jsonl"
        assert not styled(app.screen.query_one("#loading-text").content)
        await pilot.click("#loading-text", offset=(12, 0))  # on the name: an action link would quit
        await pilot.pause()
        assert app.is_running and app.return_code is None
        release.set()
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryScreen) and app.screen.report is not None)
        await pilot.pause()
        assert path.name in screen_text(app)  # the title names the file as it is
        await pilot.click("#title", offset=(40, 0))
        assert app.is_running and app.return_code is None


@run_async
async def test_a_failed_load_and_a_failed_refresh_name_the_file_as_it_is():
    error = "x[bold red]RED.jsonl[/nope]: cannot read [@click=app.quit]here"

    def load(progress):
        raise ValueError(error)

    app = DoctorApp(CallableProvider(load), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        label = app.screen.query_one("#loading-text")
        assert f"ValueError: {error}" in str(label.content) and not styled(label.content)
        assert "RED.jsonl[/nope]" in screen_text(app)

    report, session = build(RECORDING)

    class Refreshing(StaticProvider):
        """A live provider whose refresh fails (the file went away): the screen says so in a toast."""

        refresh_interval = 0.05

        def refresh(self):
            raise ValueError(error)

    app = DoctorApp(Refreshing(report, session=session), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app._notifications))
        await pilot.pause()
        notification = list(app._notifications)[0]
        assert error in notification.message and not notification.markup
        assert app.is_running and app.return_code is None


@run_async
async def test_tool_names_with_markup_stay_text_in_tables_detail_and_palette(tmp_path):
    """A recording whose tool is named with markup: the Overview, both tables, the detail screen, the
    palette over it (the audit of item 12: these were Text already on main, and must stay so)."""
    evil = "[bold red]evil[/][@click=app.quit]x[/nope]"
    data = RECORDING.read_bytes().replace(b'"name":"read_file"', b'"name":"' + evil.encode() + b'"')
    assert evil.encode() in data, "the recording no longer calls read_file: pick another tool"
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    report, session = build(path)
    app = DoctorApp(StaticProvider(report, session=session), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        tools = app.screen.query_one("#tools-table", DataTable)
        cells = [cell for row in range(tools.row_count) for cell in tools.get_row_at(row)]
        assert any(evil in getattr(cell, "plain", str(cell)) for cell in cells)
        assert evil[:20] in screen_text(app)
        await pilot.press("3")
        await pilot.pause()
        results = app.screen.query_one("#results-table", DataTable)
        for row in range(results.row_count):
            if any(evil in getattr(cell, "plain", "") for cell in results.get_row_at(row)):
                results.move_cursor(row=row)
                break
        else:
            raise AssertionError("no result row names the tool")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultDetailScreen))
        await pilot.pause()
        assert evil[:30] in screen_text(app)
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"open")
        await pilot.pause(0.2)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.is_running and app.return_code is None


def test_the_fleet_names_a_stored_path_it_cannot_open_as_it_is(capsys, tmp_path, monkeypatch):
    """`doctor scan --paths short` stores "/…/a[/nope]b.jsonl"; enter on it cannot open it here and says
    so in a notification (on main: MarkupError, the app died)."""
    from doctor.triage.fleet import load_fleet, session_provider
    from doctor.triage.store import Store
    from doctor.tui.screens.fleet import FleetScreen

    path = _hostile_copy(tmp_path, "a[/nope]b.jsonl")
    db = tmp_path / "t[bold red]x[/nope].duckdb"
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "--db", str(db), "--jobs", "1", "--paths", "short", str(path), "-o", str(tmp_path / "o.txt")]) == 0
    store = Store(db, read_only=True)
    try:
        data = load_fleet(store)
    finally:
        store.close()
    [stored] = [session["path"] for session in data.sessions]
    assert "[/nope]" in stored

    async def journey() -> None:
        app = DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            title = app.screen.query_one("#title").content  # it names the database as it is
            assert str(db) in str(title) and not styled(title)
            await pilot.press("enter")
            await pilot.pause()
            [notification] = list(app._notifications)
            assert stored in notification.message and not notification.markup
            assert stored in screen_text(app)
            assert app.is_running and app.return_code is None

    asyncio.run(journey())
