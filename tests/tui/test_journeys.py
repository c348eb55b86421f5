"""Pilot tests: the journeys a user takes, driven through the app's keys and the CLI seam."""

from __future__ import annotations

import asyncio
import io
import functools
import threading
from dataclasses import replace

import pytest
from rich.console import Console
from textual.app import App
from textual.widgets import Checkbox, Input, Static

import doctor
from doctor.tui.app import DoctorApp
from doctor.tui.provider import CallableProvider, StaticProvider
from doctor.tui.screens.detail import ResultDetailScreen
from doctor.tui.screens.help import HelpScreen
from doctor.tui.screens.memory import MemoryScreen
from doctor.tui.screens.pager import PagerScreen
from doctor.tui.widgets.pager_view import PagerView
from doctor.tui.widgets.tables import ResultsTable, ToolsTable

from tests.tui.helpers import build, copy_recording, relative_session

SIZE = (100, 30)


def run_async(test):
    """Run an async test with asyncio.run (no pytest-asyncio in this project)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


def app_for(name: str, **kwargs) -> DoctorApp:
    report, session = build(relative_session(name))
    return DoctorApp(StaticProvider(report, session=session), keymap={}, **kwargs)


async def loaded(pilot) -> MemoryScreen:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, MemoryScreen) and screen.report is not None
    return screen


def text_of(widget: Static) -> str:
    """What a Static shows, as plain text (its content rendered by a recording console)."""
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.export_text()


def row_keys(table) -> list[str]:
    return [row.key.value for row in table.ordered_rows]


async def wait_for(pilot, condition, tries: int = 100) -> None:
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    assert condition()


@run_async
async def test_largest_result_to_its_spill_file_search_and_follow(tmp_path):
    """Open a recording → biggest result → its spill file → search → follow as it grows."""
    path = copy_recording("batch-budget", tmp_path)
    report, session = build(path)
    app = DoctorApp(StaticProvider(report, session=session), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert "ALARM" not in text_of(screen.query_one("#alarm"))
        await pilot.press("b")
        detail = app.screen
        assert isinstance(detail, ResultDetailScreen)
        biggest = report.retention.largest(1)[0]
        assert detail.result.ordinal == biggest.ordinal
        assert "batch budget" in text_of(detail.query_one("#detail-meta"))
        await pilot.press("enter")
        pager = app.screen
        assert isinstance(pager, PagerScreen)
        spill = screen.links.openable(biggest).resolution.real
        assert pager.path == str(spill)
        view = pager.query_one(PagerView)
        await wait_for(pilot, lambda: not pager.indexing and view.line_text(0) is not None)
        assert view.line_text(0).startswith("Command: python3")

        await pilot.press("slash")
        await pilot.press(*"exit code", "enter")
        await wait_for(pilot, lambda: pager.search_result.startswith("match"))
        assert view.current == 4 and view.line_text(4).startswith("Exit Code")
        await pilot.press("N")
        await wait_for(pilot, lambda: "no more" in pager.search_result)
        assert view.current == 4

        await pilot.press("f")
        assert pager.following
        lines = view.line_count
        with open(spill, "a", encoding="utf-8") as handle:
            handle.write("\nappended while following\nsecond new line\n")  # the file had no final newline
        await wait_for(pilot, lambda: view.line_count == lines + 2)
        await wait_for(pilot, lambda: view.current == view.line_count - 1)
        await wait_for(pilot, lambda: view.line_text(view.current) == "second new line")
        assert "FOLLOW" in text_of(pager.query_one("#pager-status"))

        await pilot.press("escape", "escape")
        assert app.screen is screen


@run_async
async def test_goto_line_and_status_position():
    app = app_for("batch-budget")
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        screen.open_result(2)
        await pilot.pause()
        await pilot.press("enter")
        pager = app.screen
        view = pager.query_one(PagerView)
        await wait_for(pilot, lambda: not pager.indexing)
        await pilot.press("g", *"6", "enter")
        assert view.current == 5
        pager.tick_status()
        assert "line 6/7 (83%)" in text_of(pager.query_one("#pager-status"))


@run_async
async def test_results_filter_oversized_and_by_tool():
    app = app_for("oversized-alarm")
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert "ALARM  2 oversized" in text_of(screen.query_one("#alarm"))
        await pilot.press("3")
        table = screen.query_one(ResultsTable)
        assert len(row_keys(table)) == 3
        await pilot.press("o")
        assert screen.query_one("#oversized-only", Checkbox).value
        oversized = {str(r.ordinal) for r in screen.report.retention.results if r.oversized}
        assert set(row_keys(table)) == oversized
        await pilot.press("o")
        await pilot.press("2")
        tools = screen.query_one(ToolsTable)
        assert row_keys(tools)[0] == "run_shell_command"  # most retained chars first
        tools.move_to("glob")
        await pilot.press("enter")
        assert screen.query_one("#results-filter", Input).value == "glob"
        assert [screen.report.retention.results[int(k)].tool for k in row_keys(table)] == ["glob"]


@run_async
async def test_tools_sort_by_key_and_header_click():
    app = app_for("oversized-alarm")
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("2")
        tools = screen.query_one(ToolsTable)
        assert row_keys(tools) == ["run_shell_command", "glob", "grep_search"]
        await pilot.press("r")  # reverse the chars sort
        assert row_keys(tools) == ["grep_search", "glob", "run_shell_command"]
        await pilot.click(ToolsTable, offset=(2, 0))  # the "tool" header: alphabetical
        assert tools.sort_column == "tool"
        assert row_keys(tools) == ["glob", "grep_search", "run_shell_command"]
        await pilot.press("s")  # next column: results count
        assert tools.sort_column == "count"


@run_async
async def test_un_spilled_result_pages_from_the_history():
    app = app_for("oversized-alarm")
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("b")
        detail = app.screen
        await wait_for(pilot, lambda: detail.preview_text is not None)
        assert detail.preview_text.startswith("Command: python3")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PagerScreen))
        pager = app.screen
        view = pager.query_one(PagerView)
        await wait_for(pilot, lambda: view.line_text(2) is not None)
        assert view.line_text(2).startswith("Output: oooo")  # one 90,000-char line, shown in part
        assert view.line(2).truncated  # the rest is read in char windows (→)
        temporary = pager.path
        await pilot.press("escape")
        await pilot.pause()
        import os

        assert not os.path.exists(temporary)


@run_async
async def test_tool_output_is_inert():
    """ANSI escapes and [markup] in a tool name or output show as text, never as styling."""
    evil = "[bold red]boom[/] \x1b[31mred\x1b[0m [link=http://x]click[/link]"
    history = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "[blink]tool", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "[blink]tool",
                                                          "response": {"output": evil}}}]},
    ]

    class Session:
        def history(self):
            return iter(history)

    report = doctor.attach(history).report()
    app = DoctorApp(StaticProvider(report, session=Session()), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        offender = text_of(screen.query_one("#offender"))
        assert "[blink]tool" in offender
        await pilot.press("b")
        detail = app.screen
        await wait_for(pilot, lambda: detail.preview_text is not None)
        rendered = detail.query_one("#detail-preview").content
        assert "[bold red]boom[/]" in rendered.plain and "\\x1b[31mred" not in rendered.plain
        assert "\x1b" not in rendered.plain
        assert not any(span.style and "red" in str(span.style) for span in rendered.spans)


@run_async
async def test_loading_shows_progress_then_the_report():
    report, session = build(relative_session("batch-budget"))
    release = threading.Event()

    def load(progress):
        progress(0.25, "measuring results")
        release.wait(5)
        return report

    app = DoctorApp(CallableProvider(load), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.1)
        screen = app.screen
        assert screen.query_one("#loading").display
        assert not screen.query_one("#tabs").display
        assert "measuring results" in text_of(screen.query_one("#loading-text"))
        assert screen.query_one("#loading-bar").percentage == pytest.approx(0.25)
        release.set()
        await loaded(pilot)
        assert screen.query_one("#tabs").display and not screen.query_one("#loading").display


@run_async
async def test_figures_are_shown_before_the_spill_audit_ends():
    """The loader hands over the measured report first: the figures paint while the audit runs."""
    report, session = build(relative_session("batch-budget"))
    release = threading.Event()

    def load(progress):
        progress(0.8, "Auditing the spill files…", report=replace(report, spill=None))
        release.wait(5)
        return report

    app = DoctorApp(CallableProvider(load, session=session), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryScreen) and app.screen.report is not None)
        await pilot.pause()
        screen = app.screen
        assert screen.query_one("#tabs").display and not screen.query_one("#loading").display
        figures = text_of(screen.query_one("#qwen"))
        assert f"{report.retention.stats.tool_result_count}" in figures
        assert "auditing" in text_of(screen.query_one("#spill-status"))
        assert screen.report.spill is None
        assert row_keys(screen.query_one(ResultsTable)) == []  # the rows are listed after the figures
        release.set()
        await loaded(pilot)
        assert screen.report is report
        assert text_of(screen.query_one("#qwen")) == figures
        assert len(row_keys(screen.query_one(ResultsTable))) == report.retention.stats.tool_result_count
        assert "auditing" not in text_of(screen.query_one("#spill-status"))


@run_async
async def test_load_failure_is_shown_not_raised():
    def load(progress):
        raise ValueError("bad settings file")

    app = DoctorApp(CallableProvider(load), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "bad settings file" in text_of(app.screen.query_one("#loading-text"))


@run_async
async def test_live_refresh_patches_tables_in_place():
    history = [{"role": "user", "parts": [{"text": "go"}]}]

    def result(index: int, size: int) -> dict:
        return {"role": "user", "parts": [{"functionResponse": {"id": f"c{index}", "name": "read_file",
                                                                 "response": {"output": "x" * size}}}]}

    history.append(result(0, 100))
    live = doctor.attach(history)

    class LiveProvider:
        refresh_interval = 0.05

        def load(self, progress):
            return live.report()

        def refresh(self):
            return live.report()

    app = DoctorApp(LiveProvider(), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        await pilot.press("3")
        table = screen.query_one(ResultsTable)
        assert row_keys(table) == ["0"]
        history.append(result(1, 5000))
        await wait_for(pilot, lambda: len(table.rows) == 2)
        assert screen.query_one(ResultsTable) is table  # patched, not rebuilt
        assert row_keys(table) == ["1", "0"]
        assert screen.refreshes >= 1


@run_async
async def test_help_palette_and_remapped_keys():
    report, session = build(relative_session("batch-budget"))
    app = DoctorApp(StaticProvider(report, session=session), keymap={"memory.biggest": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert ("x", "Biggest", "memory.biggest") in app.screen.rows
        await pilot.press("escape")
        await pilot.press("b")  # remapped away
        assert isinstance(app.screen, MemoryScreen)
        await pilot.press("x")
        assert isinstance(app.screen, ResultDetailScreen)
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.press(*"biggest")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultDetailScreen))
        await pilot.press("escape")
        theme = app.theme
        await pilot.press("ctrl+t")
        assert app.theme != theme


@run_async
async def test_memory_screen_can_be_pushed_by_a_textual_host():
    report, session = build(relative_session("batch-budget"))

    class Host(App):
        def on_mount(self):
            self.push_screen(MemoryScreen(StaticProvider(report, session=session)))

    async with Host().run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert screen.query_one(ResultsTable).row_count == report.retention.stats.tool_result_count
        await pilot.press("b")
        assert isinstance(pilot.app.screen, ResultDetailScreen)


def test_cli_opens_the_tui_with_a_loader(monkeypatch):
    """`doctor memory PATH` on a terminal hands the TUI a loader, not a finished report."""
    import doctor.commands.memory as memory
    import doctor.tui
    from doctor.cli import main

    seen = {}

    def fake_run(report=None, *, load=None, session=None, **kwargs):
        seen["report"] = report
        seen["progress"] = []
        seen["built"] = load(lambda fraction, text, report=None: seen["progress"].append((fraction, text, report)))

    monkeypatch.setattr(memory, "_wants_tui", lambda args: True)
    monkeypatch.setattr(doctor.tui, "run_memory_app", fake_run)
    code = main(["memory", str(relative_session("oversized-alarm"))])
    assert seen["report"] is None
    assert seen["built"].retention.stats.oversized_result_count == 2
    assert seen["progress"][-1][0] == 1.0
    early = [report for _, _, report in seen["progress"] if report is not None]  # the figures, before the audit
    assert len(early) == 1 and early[0].spill is None and seen["built"].spill is not None
    assert early[0].retention.stats == seen["built"].retention.stats
    assert code == 0


@run_async
async def test_pager_pages_sideways_through_a_giant_line(tmp_path):
    """One 5 MB line: → reads char windows, search jumps deep into it, g line:char goes there."""
    path = tmp_path / "giant.txt"
    path.write_bytes(b"a" * 3_000_000 + b"NEEDLE" + b"b" * 2_000_000 + b"\nshort needle\n")

    class Host(App):
        def on_mount(self):
            self.push_screen(PagerScreen(str(path)))

    async with Host().run_test(size=(80, 24)) as pilot:
        pager = pilot.app.screen
        view = pager.query_one(PagerView)
        await wait_for(pilot, lambda: not pager.indexing and view.line_text(0) is not None)
        assert view.line(0).truncated and view.line_count == 2
        width = view.body_width()

        await pilot.press("right", "right")
        assert view.column == 2 * (width // 2)
        await wait_for(pilot, lambda: view.visible_chars(view.line(0), view.column, width) is not None)
        assert view.visible_chars(view.line(0), view.column, width) == ("a" * width, True)

        await pilot.press("slash", *"needle", "enter")
        await wait_for(pilot, lambda: pager.search_result.startswith("match"))
        assert (pager.last_match.line, pager.last_match.char) == (0, 3_000_000)
        assert view.column <= 3_000_000 < view.column + width
        await wait_for(pilot, lambda: view.visible_chars(view.line(0), view.column, width) is not None)
        shown, goes_on = view.visible_chars(view.line(0), view.column, width)
        assert "aNEEDLEb" in shown and goes_on
        pager.tick_status()
        assert f"chars {view.column + 1:,}" in text_of(pager.query_one("#pager-status"))

        await pilot.press("n")
        await wait_for(pilot, lambda: pager.last_match.line == 1)
        assert view.current == 1 and view.column == 0

        await pilot.press("g", *"1:4,999,990", "enter")
        assert (view.current, view.column) == (0, 4_999_989)
        await wait_for(pilot, lambda: view.visible_chars(view.line(0), view.column, width) is not None)
        assert view.visible_chars(view.line(0), view.column, width) == ("b" * 17, False)
        await pilot.press("0")
        assert view.column == 0


@run_async
async def test_many_rows_changing_rebuild_the_table_in_bulk(monkeypatch):
    """Past REBUILD_ABOVE changed rows the tables are rebuilt in one bulk step: same order, filters, cursor."""
    monkeypatch.setattr(ResultsTable, "REBUILD_ABOVE", 0)
    app = app_for("oversized-alarm")
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(ResultsTable)
        results = list(screen.report.retention.results)
        by_chars = sorted(results, key=lambda r: r.chars, reverse=True)
        assert row_keys(table) == [str(r.ordinal) for r in by_chars]
        assert table.virtual_size.height == len(results) + 1  # rows and header, set on idle
        await pilot.press("3", "o")
        oversized = [str(r.ordinal) for r in by_chars if r.oversized]
        await wait_for(pilot, lambda: row_keys(table) == oversized)
        table.move_to(oversized[-1])
        await pilot.press("o")
        await wait_for(pilot, lambda: table.row_count == len(results))
        assert row_keys(table) == [str(r.ordinal) for r in by_chars]
        assert table.selected_key() == oversized[-1]  # the cursor stays on its row


@run_async
async def test_bulk_rows_measure_like_add_row():
    """The bulk path's column widths (measured on the worker) are what DataTable.add_row measures."""
    from textual.widgets import DataTable

    report, _ = build(relative_session("oversized-alarm"))
    from doctor.tui.view import prepare

    view = prepare(report)

    class Tables(App):
        def compose(self):
            yield ResultsTable(id="bulk")
            yield DataTable(id="plain")

    app = Tables()
    async with app.run_test(size=SIZE) as pilot:
        bulk = app.query_one("#bulk", ResultsTable)
        plain = app.query_one("#plain", DataTable)
        for column in bulk.ordered_columns:  # the same header labels (the sorted one carries ↓)
            plain.add_column(column.label.copy(), key=column.key.value)
        bulk.show_rows(view.results)
        for key, cells in zip(view.results.keys, view.results.cells):
            plain.add_row(*cells, key=key)
        await pilot.pause()
        assert [c.content_width for c in bulk.ordered_columns] == [c.content_width for c in plain.ordered_columns]
        assert bulk.virtual_size == plain.virtual_size
