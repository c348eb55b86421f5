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


@run_async
async def test_q_quits_from_the_pager_and_escape_goes_back():
    """README: `q` quits. In the pager too (escape goes back), and the pager's footer shows it."""
    from doctor.tui.screens.pager import PagerScreen
    from doctor.tui.screens.help import active_keys

    app = app_for("batch-budget")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("b", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PagerScreen))
        assert ("q", "Quit", "app.quit") in active_keys(app.screen)
        footer_keys = [binding.key for (_, binding, enabled, _) in app.screen.active_bindings.values() if binding.show]
        assert "q" in footer_keys
        await pilot.press("escape")
        assert not isinstance(app.screen, PagerScreen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PagerScreen))
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running  # quit, not back to the detail screen
        del screen


@run_async
async def test_q_typed_into_the_results_filter_is_text():
    app = app_for("oversized-alarm")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        from textual.widgets import Input

        await pilot.press("slash")
        await pilot.pause()
        assert screen.focused is screen.query_one("#results-filter", Input)
        await pilot.press("q")
        assert screen.query_one("#results-filter", Input).value == "q" and app.is_running


@pytest.mark.parametrize("tab, table_type", [("2", "ToolsTable"), ("3", "ResultsTable")])
@run_async
async def test_end_and_home_go_to_the_last_and_first_row(tab, table_type):
    """End in the Tools and Results tables goes to the last row (it scrolled to the rightmost column)."""
    from doctor.tui.widgets import tables

    app = app_for("oversized-alarm")
    async with app.run_test(size=(60, 16)) as pilot:  # narrow and short: both scrolls are possible
        screen = await loaded(pilot)
        await pilot.press(tab)
        table = screen.query_one(getattr(tables, table_type))
        assert table.row_count > 1
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == table.row_count - 1 and table.scroll_x == 0
        await pilot.press("home")
        await pilot.pause()
        assert table.cursor_row == 0 and table.scroll_y == 0


def header(table, key: str) -> str:
    return next(column.label.plain for column in table.ordered_columns if column.key.value == key)


@run_async
async def test_sorted_column_shows_its_direction():
    """s / r reorder the table; the sorted column's header says so, even when all values are equal."""
    from doctor.tui.widgets.tables import ToolsTable

    app = app_for("oversized-alarm")
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("2")
        tools = screen.query_one(ToolsTable)
        assert header(tools, "chars") == "chars ↓" and header(tools, "tool") == "tool"
        await pilot.press("r")
        assert header(tools, "chars") == "chars ↑"
        await pilot.press("s")  # the next column
        assert header(tools, "tokens") == "tokens ↓" and header(tools, "chars") == "chars"
        while tools.sort_column != "count":  # every tool has one result: only the header shows the sort
            await pilot.press("s")
        assert header(tools, "count") == "results ↓"
        await pilot.pause()
        assert "results ↓" in tools.render_line(0).text  # drawn, not only set


@run_async
async def test_oversized_only_with_no_match_says_so():
    from doctor.tui.widgets.tables import ResultsTable

    app = app_for("batch-budget")  # nothing oversized
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("3")
        status = screen.query_one("#results-status", Static)
        assert text_of(status).strip() == "8 of 8 results"
        await pilot.press("o")
        assert screen.query_one(ResultsTable).row_count == 0
        assert text_of(status).strip() == "No result matches oversized only (8 in all): o shows all sizes"
        await pilot.press("o", "slash", *"zzz")
        assert "No result matches “zzz” (8 in all): clear the filter (/)" in text_of(status)


def svg_runs_text(svg: str) -> list[str]:
    """Each screen line of an SVG screenshot as a reader gets it who joins the text runs, trimmed.

    How the Overview banner read `run_shell_command90,200 chars` (issue 10): the gap after the
    tool name was the leading whitespace of a separate run.
    """
    import html as html_module
    import re
    from collections import defaultdict

    lines = defaultdict(list)
    for match in re.finditer(r'<text[^>]*clip-path="url\(#[\w-]+-line-(\d+)\)"[^>]*>(.*?)</text>', svg, re.S):
        lines[int(match.group(1))].append(html_module.unescape(match.group(2)).replace("\xa0", " ").strip())
    return ["".join(runs) for _, runs in sorted(lines.items())]


@run_async
async def test_tool_name_and_figures_are_separated_in_banner_and_detail_header():
    app = app_for("oversized-alarm")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        assert "#0 run_shell_command · 90,200 chars, turn 1" in text_of(screen.query_one("#offender"))
        overview = "\n".join(svg_runs_text(app.export_screenshot()))
        assert "run_shell_command90,200" not in overview
        assert "run_shell_command·90,200chars" in overview.replace(" ", "")
        await pilot.press("b")
        await pilot.pause()
        assert text_of(app.screen.query_one("#title")).startswith("Result #0 · run_shell_command · turn 1")
        detail = "\n".join(svg_runs_text(app.export_screenshot()))
        assert "run_shell_commandturn" not in detail
        assert "Result#0·run_shell_command·turn1" in detail.replace(" ", "")


@run_async
async def test_pager_more_marker_shows_beside_a_vertical_scrollbar(tmp_path):
    """A line wider than the screen ends in "›" also when the file is long enough for a scrollbar."""
    from textual.app import App

    from doctor.tui.screens.pager import PagerScreen
    from doctor.tui.widgets.pager_view import PagerView

    path = tmp_path / "long.txt"
    path.write_text("w" * 500 + "\n" + "".join(f"line {n}\n" for n in range(200)))

    class Host(App):
        def on_mount(self):
            self.push_screen(PagerScreen(str(path)))

    async with Host().run_test(size=(80, 24)) as pilot:
        pager = pilot.app.screen
        view = pager.query_one(PagerView)
        await wait_for(pilot, lambda: not pager.indexing and view.line_text(0) is not None)
        await wait_for(pilot, lambda: view.show_vertical_scrollbar)  # laid out a few frames later under load

        def first_wide_line() -> str:
            return next(line for line in svg_runs_text(pilot.app.export_screenshot()) if "www" in line)

        await wait_for(pilot, lambda: first_wide_line().endswith("w›"))


@run_async
async def test_pager_messages_go_to_its_status_line_not_toasts_over_the_text():
    """At 80x24 a toast covered the pager's text and its status line: the pager says things in the status."""
    from doctor.tui.screens.pager import PagerScreen

    app = app_for("batch-budget")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("b", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PagerScreen))
        pager = app.screen
        await wait_for(pilot, lambda: not pager.indexing)
        status = pager.query_one("#pager-status", Static)
        await pilot.press("slash", *"nothing like this", "enter")
        await wait_for(pilot, lambda: "no more matches" in text_of(status))
        await pilot.press("slash", "ctrl+u", *"/a(/", "enter")
        await wait_for(pilot, lambda: "bad regex" in text_of(status))
        await pilot.press("g", *"x", "enter")
        await wait_for(pilot, lambda: "not a line" in text_of(status))
        await pilot.pause()
        assert list(app._notifications) == []  # no toast over the text


def svg_screen_lines(svg: str, cell: float = 12.2) -> list[str]:
    """The screen of an SVG screenshot as text, each run placed at its column (runs skip blank cells)."""
    import html as html_module
    import re
    from collections import defaultdict

    rows: dict[int, dict[int, str]] = defaultdict(dict)
    for match in re.finditer(r'<text[^>]*?x="([\d.]+)"[^>]*?clip-path="url\(#[\w-]+-line-(\d+)\)"[^>]*>(.*?)</text>',
                             svg, re.S):
        column = round(float(match.group(1)) / cell)
        for offset, char in enumerate(html_module.unescape(match.group(3)).replace("\xa0", " ")):
            rows[int(match.group(2))][column + offset] = char
    return ["".join(row.get(c, " ") for c in range(max(row) + 1)).rstrip() if row else ""
            for _, row in sorted(rows.items())]


@run_async
async def test_wrapped_overview_lines_keep_their_indent():
    """At 80 columns Qwen's "Oversized also in compression input: …" wraps; its second line stays indented."""
    app = app_for("oversized-alarm")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        lines = svg_screen_lines(app.export_screenshot())
        first = next(i for i, line in enumerate(lines) if "Oversized also in compression input" in line)
        indent = len(lines[first]) - len(lines[first].lstrip())
        assert lines[first + 1].strip() == "copy)"  # wrapped (80 columns)
        assert len(lines[first + 1]) - len(lines[first + 1].lstrip()) == indent  # under the text, not at the edge


@run_async
async def test_detail_names_where_the_file_was_written_and_found_and_wraps_paths_at_slashes():
    """At 80x24: labels say what the two paths are, and a long path breaks after a '/', under its column."""
    app = app_for("batch-budget")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("b")
        await pilot.pause()
        found = str(screen.links.openable(app.screen.result).resolution.found)
        lines = svg_screen_lines(app.export_screenshot())
        start = next(i for i, line in enumerate(lines) if "found at" in line)
        assert any("stub names" in line for line in lines[:start])
        assert not any(" written " in line or " here " in line for line in lines)
        column = lines[start].index("found at") + len("found at")
        pieces = [lines[start][column:].strip()]
        for line in lines[start + 1:]:
            if line[:column].strip("█ ") or line[column:].strip().startswith("moved"):  # the next row
                break
            pieces.append(line[column:].strip())
        assert len(pieces) > 1, "the path fits: the test needs a wrap"
        assert all(piece.endswith("/") for piece in pieces[:-1]), pieces
        assert "".join(pieces).startswith(found)


@pytest.mark.parametrize("tab", ["1", "2", "3", "4"])
@run_async
async def test_footer_fits_at_80_columns_on_every_tab(tab):
    """The Process tab's footer read "… b Bigge": every tab's footer keeps its keys, Quit and Help at 80x24."""
    app = app_for("oversized-alarm")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press(tab)
        await pilot.pause()
        footer = svg_screen_lines(app.export_screenshot())[-1]
        assert footer.rstrip().endswith("q Quit  ? Help"), footer
        assert "1 2 3 4 Tabs" in footer
        if tab == "4":
            assert "p Measure now  t Top sites  S Snapshot" in footer
