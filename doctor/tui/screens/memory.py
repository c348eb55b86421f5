"""The main screen: a report in four tabs, loaded and refreshed on worker threads.

Pushable into any Textual app (`app.push_screen(MemoryScreen(provider))`): it needs no
particular App subclass, only a provider (see `doctor.tui.provider`).
"""

from __future__ import annotations

import gc
import time

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import (
    Checkbox,
    Input,
    Label,
    ProgressBar,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import get_current_worker

from doctor.report.inert import inert_line
from doctor.tui import format as fmt
from doctor.tui.messages import LoadFailed, LoadProgress, ReportReady
from doctor.tui.provider import ReportProvider, refresh_interval, refresher
from doctor.tui.spill_links import SpillLinks
from doctor.tui.view import ReportView, prepare
from doctor.tui.widgets.footer import DoctorFooter
from doctor.tui.widgets.overview import Overview
from doctor.tui.widgets.process import ProcessPane
from doctor.tui.widgets.tables import ResultsTable, ToolsTable
from doctor.tui.widgets.whatif import WhatIfPane

PROGRESS_EVERY = 0.05  # seconds between progress messages from the loader thread
# The widget that takes the keys of each tab: a tab's keys (Process's p / t / S, the
# Overview's PageDown / End) work as soon as it is shown, not after Tab moves focus there.
TABS = Binding.Group("Tabs")
TAB_FOCUS = {"overview": Overview, "tools": ToolsTable, "results": ResultsTable, "process": ProcessPane,
             "whatif": "#whatif-set"}


class MemoryScreen(Screen):
    """Overview · Tools · Results · Process for one report provider."""

    BINDINGS = [
        # One footer entry for the four tab keys ("1 2 3 4 Tabs"; the tab bar names them): at 80
        # columns four named entries pushed the Process tab's own keys and Quit off the footer.
        Binding("1", "tab('overview')", "Overview", id="memory.overview", group=TABS),
        Binding("2", "tab('tools')", "Tools", id="memory.tools", group=TABS),
        Binding("3", "tab('results')", "Results", id="memory.results", group=TABS),
        Binding("4", "tab('process')", "Process", id="memory.process", group=TABS),
        # Not in the footer (at 80 columns the Process tab's keys would lose Help): the tab bar names it.
        Binding("5", "tab('whatif')", "What if", id="memory.whatif", group=TABS, show=False),
        Binding("b", "biggest", "Biggest", id="memory.biggest"),
        Binding("o", "toggle_oversized", "Oversized only", id="memory.oversized", show=False),
        Binding("slash", "filter", "Filter", id="memory.filter", show=False),
        Binding("escape", "back", "Back", id="memory.back", show=False),
        Binding("ctrl+r", "refresh", "Refresh", id="memory.refresh", show=False),
    ]

    def __init__(self, provider: ReportProvider, *, name: str | None = None, freeze_gc: bool = False) -> None:
        """`freeze_gc`: move what the first load built out of the cyclic GC's way (`gc.freeze`).

        A 50 MB dump leaves millions of long-lived objects; every full collection then walked
        them all, holding the GIL for 0.1-0.2 s whichever thread triggered it (the largest
        frame gaps left in benchmarks/bench_tui_frames.py). Frozen objects are still freed by
        reference counting, only cycles among them are not: worth it for the `doctor memory`
        app, which owns its process (DoctorApp sets it), not for a screen pushed into a host.
        """
        super().__init__(name=name)
        self.provider = provider
        self.freeze_gc = freeze_gc
        self.view: ReportView | None = None
        self.refreshes = 0

    @property
    def report(self):
        """The report on screen (None until the first load is done)."""
        return None if self.view is None else self.view.report

    @property
    def links(self) -> SpillLinks:
        return SpillLinks() if self.view is None else self.view.links

    def compose(self) -> ComposeResult:
        yield Static("doctor memory — loading…", id="title")
        with Vertical(id="loading"):
            yield Label("Reading the session…", id="loading-text")
            yield ProgressBar(id="loading-bar", show_eta=False)
        with TabbedContent(id="tabs", initial="overview"):
            with TabPane("1 Overview", id="overview"):
                yield Overview(id="overview-pane")
            with TabPane("2 Tools", id="tools"):
                yield ToolsTable(id="tools-table")
            with TabPane("3 Results", id="results"):
                with Horizontal(id="results-filters"):
                    yield Input(placeholder="filter: tool name or text (/)", id="results-filter")
                    yield Checkbox("oversized only (o)", id="oversized-only")
                yield Static(id="results-status")
                yield ResultsTable(id="results-table")
            with TabPane("4 Process", id="process"):
                yield ProcessPane(id="process-pane")
            with TabPane("5 What if", id="whatif"):
                yield WhatIfPane(self._whatif_source, id="whatif-pane")
        yield DoctorFooter()

    def on_mount(self) -> None:
        self.query_one("#tabs").display = False
        self.load_report()

    def _whatif_source(self):
        """(session, options) for the What-if tab, when the provider read the report from a session file."""
        source = getattr(self.provider, "whatif_source", None)
        return source() if callable(source) else None

    # -- loading and refreshing (workers) -----------------------------------------

    @work(thread=True, exclusive=True, group="doctor-load", exit_on_error=False)
    def load_report(self) -> None:
        last = 0.0

        def progress(fraction: float | None, text: str, report=None) -> None:
            nonlocal last
            if report is not None and not get_current_worker().is_cancelled:
                self.post_message(ReportReady(prepare(report, with_rows=False), partial=True))
            now = time.monotonic()
            if now - last >= PROGRESS_EVERY or (fraction is not None and fraction >= 1):
                last = now
                if self.freeze_gc:  # what is read so far stays: keep full collections short
                    gc.freeze()
                self.post_message(LoadProgress(fraction, text))

        try:
            report = self.provider.load(progress)
            progress(1.0, "Preparing the tables…")
            view = prepare(report)
            if self.freeze_gc:
                gc.freeze()
        except Exception as exc:  # shown on screen; the terminal stays usable
            self.post_message(LoadFailed(f"{type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ReportReady(view))

    @work(thread=True, exclusive=True, group="doctor-refresh", exit_on_error=False)
    def refresh_report(self) -> None:
        refresh = refresher(self.provider)
        if refresh is None:
            return
        try:
            report = refresh()
            if report is None:  # nothing changed
                return
            view = prepare(report)
        except Exception as exc:
            self.post_message(LoadFailed(f"refresh failed: {type(exc).__name__}: {exc}"))
            return
        self.post_message(ReportReady(view, refreshed=True))

    def on_load_progress(self, message: LoadProgress) -> None:
        bar = self.query_one("#loading-bar", ProgressBar)
        bar.update(total=None if message.fraction is None else 100,
                   progress=0 if message.fraction is None else message.fraction * 100)
        self.query_one("#loading-text", Label).update(Text(fmt.inert(message.text)))  # it names the file: not markup

    def on_load_failed(self, message: LoadFailed) -> None:
        if self.report is None:
            self.query_one("#loading-text", Label).update(Text(fmt.inert(f"Could not load the report: {message.error}")))
            self.query_one("#loading-bar").display = False
        else:
            self.notify(inert_line(message.error), severity="error", markup=False)

    def on_report_ready(self, message: ReportReady) -> None:
        first = self.report is None
        self.show(message.view)
        if message.partial:  # the figures only: the audit and the Results rows follow
            self.query_one("#spill-status", Static).update(Text("Spilled outputs\n  auditing…", style="dim"))
            self.query_one("#results-status", Static).update(Text("listing the results…", style="dim"))
        if message.refreshed:
            self.refreshes += 1
        if first:
            self.query_one("#loading").display = False
            self.query_one("#tabs").display = True
            self.action_tab("overview")
            if self.freeze_gc:  # the widgets and caches the first paint builds stay too
                self.call_after_refresh(gc.freeze)
            if refresher(self.provider) is not None:
                self.set_interval(refresh_interval(self.provider), self.refresh_report, name="doctor-refresh")

    def show(self, report) -> None:
        """Render a report (or a `ReportView` prepared on a worker); a second call patches the tables in place.

        With a prepared view this only hands finished renderables and rows to the widgets;
        a bare report is prepared here first (tests, hosts calling `show` themselves).
        """
        view = report if isinstance(report, ReportView) else prepare(report)
        self.view = view
        with self.app.batch_update():
            self.query_one("#title", Static).update(view.title)
            self.query_one(Overview).apply(view.overview)
            for table in (self.query_one(ToolsTable), self.query_one(ResultsTable)):
                table.relabel(dict(view.labels))
            self.query_one(ToolsTable).show_rows(view.tools)
            self._show_results()
            self.query_one(ProcessPane).show(view.report)

    def _show_results(self) -> None:
        view = self.view
        if view is None:
            return
        text = self.query_one("#results-filter", Input).value.strip().lower()
        oversized_only = self.query_one("#oversized-only", Checkbox).value
        rows = view.results
        if text or oversized_only:
            rows = rows.subset(i for i, key in enumerate(view.result_filters)
                               if (not oversized_only or key.oversized)
                               and (not text or text in key.tool or text == key.ordinal or text in key.sentinel))
        table = self.query_one(ResultsTable)
        table.show_rows(rows)
        self.query_one("#results-status", Static).update(results_status(len(rows), view.result_count, text,
                                                                         oversized_only))

    # -- filters and navigation ----------------------------------------------------

    @on(Input.Changed, "#results-filter")
    def _filter_changed(self) -> None:
        self._show_results()

    @on(Input.Submitted, "#results-filter")
    def _filter_submitted(self) -> None:
        self.query_one(ResultsTable).focus()

    @on(Checkbox.Changed, "#oversized-only")
    def _oversized_changed(self) -> None:
        self._show_results()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab shown by click or the tab bar takes the keys; focus already in it (`/`'s filter) stays."""
        focused = self.focused
        if focused is None or event.pane not in focused.ancestors_with_self:
            self._focus_tab(event.pane.id)

    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab
        self._focus_tab(tab)

    def _focus_tab(self, tab: str | None) -> None:
        focus = TAB_FOCUS.get(tab or "")
        if focus is not None:
            self.query_one(focus).focus()

    def action_filter(self) -> None:
        self.action_tab("results")
        self.query_one("#results-filter", Input).focus()

    def action_toggle_oversized(self) -> None:
        self.action_tab("results")
        box = self.query_one("#oversized-only", Checkbox)
        box.value = not box.value

    def action_back(self) -> None:
        focused = self.focused
        if isinstance(focused, Input):
            self.query_one(ResultsTable).focus()

    def action_refresh(self) -> None:
        if refresher(self.provider) is None:
            self.notify("This report is a snapshot; live and --follow modes refresh.", timeout=3)
        else:
            self.refresh_report()

    def filter_tool(self, tool: str) -> None:
        self.query_one("#oversized-only", Checkbox).value = False
        self.query_one("#results-filter", Input).value = tool
        self.action_tab("results")

    def action_biggest(self) -> None:
        if self.view is None or self.view.biggest_ordinal is None:
            self.notify("No tool results in this history.")
            return
        self.open_result(self.view.biggest_ordinal)

    def open_result(self, ordinal: int) -> None:
        from doctor.tui.screens.detail import ResultDetailScreen

        results = self.report.retention.results if self.report.retention else ()
        result = results[ordinal] if 0 <= ordinal < len(results) else None  # ordinals index the results
        if result is None or result.ordinal != ordinal:
            result = next((r for r in results if r.ordinal == ordinal), None)
        if result is None:
            return
        table = self.query_one(ResultsTable)
        table.move_to(str(ordinal))
        self.app.push_screen(ResultDetailScreen(result, self.report, self.links, self.provider))

    @on(ResultsTable.RowSelected, "#results-table")
    def _result_selected(self, event: ResultsTable.RowSelected) -> None:
        self.open_result(int(event.row_key.value))

    @on(ToolsTable.RowSelected, "#tools-table")
    def _tool_selected(self, event: ToolsTable.RowSelected) -> None:
        self.filter_tool(event.row_key.value)


def results_status(shown: int, total: int, text: str, oversized_only: bool) -> Text:
    """The line above the Results table: how many rows the filters left, and what to do when none."""
    if total == 0:
        return Text("No tool results in this history.", style="dim")
    filters = [name for name, on in (("oversized only", oversized_only), (f"“{text}”", bool(text))) if on]
    if shown == 0:
        undo = " · ".join(hint for hint, on in (("o shows all sizes", oversized_only),
                                                 ("clear the filter (/)", bool(text))) if on)
        return Text(f"No result matches {' and '.join(filters)} ({total} in all): {undo}", style="bold yellow")
    line = Text(f"{shown} of {total} results")
    if filters:
        line.append(f" · {', '.join(filters)}", style="dim")
    return line
