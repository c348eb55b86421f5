"""The pager: a spill file of any size, searched and followed without blocking the UI."""

from __future__ import annotations

import re

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from doctor.tui import format as fmt
from doctor.tui.line_source import LineSource, compile_search, inert
from doctor.tui.screens.prompt import PromptScreen
from doctor.tui.widgets.pager_view import PagerView

STATUS_EVERY = 0.2
FOLLOW_EVERY = 0.5


class PagerScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "close", "Back", id="pager.back"),
        Binding("slash", "search", "Search", id="pager.search"),
        Binding("n", "search_next", "Next", id="pager.next"),
        Binding("N", "search_previous", "Previous", id="pager.previous"),
        Binding("g", "goto", "Go to line", id="pager.goto"),
        Binding("f", "toggle_follow", "Follow", id="pager.follow"),
        Binding("home", "top", "Top", id="pager.top", show=False),
        Binding("end,G", "bottom", "End", id="pager.bottom", show=False),
        Binding("j,down", "line(1)", "Down", id="pager.down", show=False),
        Binding("k,up", "line(-1)", "Up", id="pager.up", show=False),
    ]

    def __init__(self, path: str, *, label: str | None = None, follow: bool = False,
                 temporary: bool = False) -> None:
        super().__init__()
        self.temporary = temporary  # a private copy made for this view: removed on close
        self.path = path
        self.label = label or path
        self.following = follow
        self.search_text = ""
        self.search_pattern: re.Pattern[bytes] | None = None
        self.searching = False
        self.search_result: str = ""
        self.source: LineSource | None = None
        self.error: str | None = None
        try:
            self.source = LineSource(path)
        except OSError as exc:
            self.error = f"cannot open {self.label}: {exc.strerror or exc}"

    def compose(self) -> ComposeResult:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("Full output  ", style="bold")
        title.append(inert(self.label))
        yield Static(title, id="title")
        if self.source is not None:
            yield PagerView(self.source, id="pager-view")
        else:
            yield Static(Text(self.error or "", style="red"), id="pager-error")
        yield Static(id="pager-status")
        yield Footer()

    def on_mount(self) -> None:
        if self.source is None:
            return
        self.view.focus()
        self.set_interval(STATUS_EVERY, self.tick_status)
        self.set_interval(FOLLOW_EVERY, self.tick_follow)
        self.tick_status()

    def on_unmount(self) -> None:
        if self.source is not None:
            self.source.close()
        if self.temporary:
            import os

            try:
                os.unlink(self.path)
            except OSError:
                pass

    @property
    def view(self) -> PagerView:
        return self.query_one(PagerView)

    # -- status ------------------------------------------------------------------

    def tick_status(self) -> None:
        if self.source is None:
            return
        view = self.view
        if self.source.indexing or view.virtual_size.height != view.line_count:
            view.update_size()
        total = view.line_count
        line = view.current + 1
        percent = 100 if total <= 1 else round(100 * view.current / (total - 1))
        text = Text(f" line {line:,}/{total:,} ({percent}%)  top {int(view.scroll_y) + 1:,}")
        text.append(f"  {fmt.size(self.source.size)}")
        if self.source.binary:
            text.append("  binary: hex view", style="yellow")
        if self.source.indexing:
            text.append(f"  indexing {self.source.index_fraction:.0%}", style="yellow")
        if self.following:
            text.append("  FOLLOW", style="bold green")
        if self.search_text:
            text.append("  search ")
            text.append(fmt.plain(self.search_text, "bold"))
            if self.searching:
                text.append(" …searching", style="yellow")
            elif self.search_result:
                text.append(f" {self.search_result}", style="dim")
        self.query_one("#pager-status", Static).update(text)

    def tick_follow(self) -> None:
        if self.source is None or not self.following:
            return
        self.check_growth()

    @work(thread=True, exclusive=True, group="pager-follow", exit_on_error=False)
    def check_growth(self) -> None:
        state = self.source.grow()
        if state != "same":
            self.app.call_from_thread(self._grown, state)

    def _grown(self, state: str) -> None:
        view = self.view
        if state == "replaced":
            old = self.source
            try:
                self.source = LineSource(self.path)
            except OSError as exc:
                self.notify(f"{self.label}: {exc.strerror or exc}", severity="error")
                self.following = False
                return
            old.close()
            view.forget_all(self.source)
            self.notify("The file was truncated or replaced: reopened.", timeout=3)
        else:
            view.forget(max(0, view.line_count - 2))
        view.update_size()
        if self.following:
            view.go_to(view.line_count - 1)
            view.scroll_end(animate=False)
        self.tick_status()

    # -- actions -----------------------------------------------------------------

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_top(self) -> None:
        self.following = False
        self.view.go_to(0)
        self.view.scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.view.go_to(self.view.line_count - 1)
        self.view.scroll_end(animate=False)

    def action_line(self, delta: int) -> None:
        if delta < 0:
            self.following = False
        self.view.go_to(self.view.current + delta)
        self.tick_status()

    def action_toggle_follow(self) -> None:
        self.following = not self.following
        if self.following:
            self.check_growth()
            self.action_bottom()
        self.tick_status()

    def action_goto(self) -> None:
        def done(value: str | None) -> None:
            if not value:
                return
            try:
                line = int(value.replace(",", "").strip())
            except ValueError:
                self.notify(f"Not a line number: {value}", severity="warning")
                return
            self.following = False
            self.view.go_to(line - 1)
            self.tick_status()

        self.app.push_screen(PromptScreen("Go to line", "line number"), done)

    def action_search(self) -> None:
        def done(value: str | None) -> None:
            if value:
                self.start_search(value)

        self.app.push_screen(PromptScreen("Search (literal, case-insensitive; /re/ for a regex)", "text",
                                          self.search_text), done)

    def start_search(self, text: str) -> None:
        regex = len(text) > 2 and text.startswith("/") and text.endswith("/")
        body = text[1:-1] if regex else text
        try:
            self.search_pattern = compile_search(body, regex=regex)
            display = re.compile(body if regex else re.escape(body), re.IGNORECASE)
        except re.error as exc:
            self.notify(f"Bad regex: {exc}", severity="error")
            return
        self.search_text = text
        self.view.highlight = display
        self.view.refresh()
        self.following = False
        self.run_search(self.view.current - 1 if self.view.current > 0 else -1, backwards=False)

    def action_search_next(self) -> None:
        if self.search_pattern is None:
            self.action_search()
            return
        self.run_search(self.view.current, backwards=False)

    def action_search_previous(self) -> None:
        if self.search_pattern is None:
            self.action_search()
            return
        self.run_search(self.view.current, backwards=True)

    @work(thread=True, exclusive=True, group="pager-search", exit_on_error=False)
    def run_search(self, from_line: int, backwards: bool) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        self.searching = True
        self.app.call_from_thread(self.tick_status)
        if from_line < 0:
            # "from before the first line": the first line itself is a candidate
            first = self.source.lines(0, 1)
            found = 0 if first and self.search_pattern.search(first[0].text.encode()) else \
                self.source.search(self.search_pattern, 0, cancelled=lambda: worker.is_cancelled)
        else:
            found = self.source.search(self.search_pattern, from_line, backwards=backwards,
                                       cancelled=lambda: worker.is_cancelled)
        self.searching = False
        if not worker.is_cancelled:
            self.app.call_from_thread(self._search_done, found, backwards)

    def _search_done(self, found: int | None, backwards: bool) -> None:
        if found is None:
            self.search_result = "no more matches " + ("above" if backwards else "below")
            self.notify(f"{self.search_text!s}: {self.search_result}", timeout=2)
        else:
            self.search_result = f"match at line {found + 1:,}"
            self.view.go_to(found)
        self.tick_status()
