"""The pager: a spill file of any size, searched, followed and paged sideways without blocking the UI.

Built on `doctor.spill.pager.Pager` (the engine `doctor spill show` uses too). The screen
owns the engine and the lock that keeps it on one thread at a time; every read, search
and follow check runs on a worker.
"""

from __future__ import annotations

import os
import re
import threading
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import get_current_worker

from doctor.spill.errors import SpillFileError
from doctor.spill.pager import FileChange, Match, Pager
from doctor.tui import format as fmt
from doctor.tui.screens.prompt import PromptScreen
from doctor.tui.widgets.footer import DoctorFooter
from doctor.tui.widgets.pager_view import PagerView

STATUS_EVERY = 0.2
NOTE_SECONDS = 4.0  # how long a message stays in the status line
FOLLOW_EVERY = 0.5
_GOTO = re.compile(r"^\s*([\d,]*)\s*(?::\s*([\d,]+))?\s*$")


class PagerScreen(Screen):
    BINDINGS = [
        Binding("escape", "close", "Back", id="pager.back"),  # q quits, as everywhere (the app's binding)
        Binding("slash", "search", "Search", id="pager.search"),
        Binding("n", "search_next", "Next", id="pager.next"),
        Binding("N", "search_previous", "Prev", id="pager.previous"),
        Binding("g", "goto", "Go to", id="pager.goto"),
        Binding("f", "toggle_follow", "Follow", id="pager.follow"),
        Binding("home", "top", "Top", id="pager.top", show=False),
        Binding("end,G", "bottom", "End", id="pager.bottom", show=False),
        Binding("j,down", "line(1)", "Down", id="pager.down", show=False),
        Binding("k,up", "line(-1)", "Up", id="pager.up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", id="pager.page_down", show=False),
        Binding("pageup,b", "page(-1)", "Page up", id="pager.page_up", show=False),
        Binding("right,l", "sideways(1)", "Right", id="pager.right", show=False),
        Binding("left,h", "sideways(-1)", "Left", id="pager.left", show=False),
        Binding("0", "line_start", "Line start", id="pager.line_start", show=False),
    ]

    def __init__(self, path: str, *, label: str | None = None, follow: bool = False,
                 temporary: bool = False) -> None:
        super().__init__()
        self.temporary = temporary  # a private copy made for this view: removed on close
        self.path = path
        self.label = label or path
        self.following = follow
        self.search_text = ""
        self.search_regex = False
        self.last_match: Match | None = None
        self.searching = False
        self.search_result: str = ""
        self.lock = threading.Lock()
        self.note: tuple[Text, float] | None = None  # a message for the status line, until its deadline
        self.pager: Pager | None = None
        self.error: str | None = None
        try:
            self.pager = Pager(path)
        except SpillFileError as exc:
            self.error = f"cannot open {self.label}: {exc.reason}"

    def compose(self) -> ComposeResult:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("Full output  ", style="bold")
        title.append(fmt.inert(self.label))
        yield Static(title, id="title")
        if self.pager is not None:
            yield PagerView(self.pager, self.lock, id="pager-view")
        else:
            yield Static(Text(self.error or "", style="red"), id="pager-error")
        yield Static(id="pager-status")
        yield DoctorFooter()

    def on_mount(self) -> None:
        if self.pager is None:
            return
        self.view.focus()
        self.set_interval(STATUS_EVERY, self.tick_status)
        self.set_interval(FOLLOW_EVERY, self.tick_follow)
        self.tick_status()

    def on_unmount(self) -> None:
        if self.pager is not None:
            self.close_pager()
        if self.temporary:
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def close_pager(self) -> None:
        """Close the engine once any read or search in flight is done, off the UI thread."""

        def close() -> None:
            with self.lock:
                self.pager.close()

        threading.Thread(target=close, name="doctor-pager-close", daemon=True).start()

    @property
    def view(self) -> PagerView:
        return self.query_one(PagerView)

    @property
    def indexing(self) -> bool:
        return self.pager is not None and self.view.indexing

    # -- status ------------------------------------------------------------------

    def tick_status(self) -> None:
        if self.pager is None:
            return
        view = self.view
        if view.virtual_size.height != view.line_count:
            view.update_size()
        total = view.line_count
        if self.following and view.current != total - 1:
            view.go_to(total - 1)
            view.scroll_end(animate=False)
        line = view.current + 1
        percent = 100 if total <= 1 else round(100 * view.current / (total - 1))
        text = Text(f" line {line:,}/{total:,} ({percent}%)  top {int(view.scroll_y) + 1:,}")
        text.append(f"  {fmt.size(self.pager.size)}")
        current = view.line(view.current)
        if view.column or (current is not None and current.truncated):
            first = view.column + 1
            text.append(f"  chars {first:,}–{first + view.body_width() - 1:,}", style="bold")
            length = view.line_bytes(view.current) if current is not None and current.truncated else None
            if length is not None:
                text.append(f" of a {fmt.size(length)} line", style="dim")
            text.append("  ←→")
        if view.binary:
            text.append("  binary: hex view", style="yellow")
        if view.indexing:
            text.append(f"  indexing {self.pager.progress.fraction:.0%}", style="yellow")
        if self.following:
            text.append("  FOLLOW", style="bold green")
        if self.note is not None and time.monotonic() < self.note[1]:
            text.append("  ")
            text.append(self.note[0])
        if self.search_text:
            text.append("  search ")
            text.append(fmt.plain(self.search_text, "bold"))
            if self.searching:
                text.append(" …searching", style="yellow")
            elif self.search_result:
                text.append(f" {self.search_result}", style="dim")
        self.query_one("#pager-status", Static).update(text)

    def say(self, message: str, style: str = "yellow") -> None:
        """A message in the status line: a toast covered the text and the status at 80x24."""
        self.note = (Text(fmt.inert(message), style=style), time.monotonic() + NOTE_SECONDS)
        self.tick_status()

    def tick_follow(self) -> None:
        if self.pager is None or not self.following:
            return
        self.check_growth()

    @work(thread=True, exclusive=True, group="pager-follow", exit_on_error=False)
    def check_growth(self) -> None:
        with self.lock:
            change = self.pager.refresh()
        if change is not FileChange.UNCHANGED:
            self.pager.wait_until_indexed(0.2)  # new lines counted before the view jumps to them
            self.app.call_from_thread(self._changed, change)

    def _changed(self, change: FileChange) -> None:
        view = self.view
        if change is FileChange.GREW:
            view.forget(max(0, view.line_count - 2))
        else:
            view.forget_all()
            self.last_match = None
            self.say(f"the file was {change.value}: reading it afresh")
        view.update_size()
        if self.following:
            view.go_to(view.line_count - 1)
            view.scroll_end(animate=False)
        self.tick_status()

    # -- moving ------------------------------------------------------------------

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_top(self) -> None:
        self.following = False
        self.view.column = 0
        self.view.go_to(0)
        self.view.scroll_home(animate=False)
        self.tick_status()

    def action_bottom(self) -> None:
        self.view.go_to(self.view.line_count - 1)
        self.view.scroll_end(animate=False)
        self.tick_status()

    def action_line(self, delta: int) -> None:
        if delta < 0:
            self.following = False
        self.view.go_to(self.view.current + delta)
        self.tick_status()

    def action_page(self, direction: int) -> None:
        if direction < 0:
            self.following = False
        view = self.view
        height = max(1, view.scrollable_content_region.height - 1)
        view.scroll_to(y=max(0, view.scroll_y + direction * height), animate=False)
        view.go_to(view.current + direction * height)
        self.tick_status()

    def action_sideways(self, direction: int) -> None:
        """Half a screen left or right along the lines; a giant line is read one window at a time."""
        view = self.view
        step = max(1, view.body_width() // 2)
        view.column = max(0, view.column + direction * step)
        self.tick_status()

    def action_line_start(self) -> None:
        self.view.column = 0
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
            parsed = _GOTO.match(value)
            if parsed is None or not (parsed.group(1) or parsed.group(2)):
                self.say(f"not a line (or line:char): {value}")
                return
            line_text, char_text = parsed.group(1), parsed.group(2)
            self.following = False
            if line_text:
                self.view.go_to(int(line_text.replace(",", "")) - 1)
            if char_text is not None:
                self.view.column = max(0, int(char_text.replace(",", "")) - 1)
            self.tick_status()

        self.app.push_screen(PromptScreen("Go to line (or line:char, :char)", "line number"), done)

    # -- search ------------------------------------------------------------------

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
            display = re.compile(body if regex else re.escape(body), re.IGNORECASE)
        except re.error as exc:
            self.say(f"bad regex: {exc}", "bold red")
            return
        self.search_text = text
        self.search_regex = regex
        self.last_match = None
        self.view.highlight = display
        self.view.refresh()
        self.following = False
        self.run_search((self.view.current, 0), backwards=False)

    def _pattern(self) -> str:
        return self.search_text[1:-1] if self.search_regex else self.search_text

    def action_search_next(self) -> None:
        if not self.search_text:
            self.action_search()
            return
        match = self.last_match
        if match is not None and match.line == self.view.current:
            start = (match.line, match.char + 1)
        else:
            start = (self.view.current + 1, 0)
        self.run_search(start, backwards=False)

    def action_search_previous(self) -> None:
        if not self.search_text:
            self.action_search()
            return
        match = self.last_match
        if match is not None and match.line == self.view.current:
            start = (match.line, match.char)
        else:
            start = (self.view.current, 0)
        self.run_search(start, backwards=True)

    @work(thread=True, exclusive=True, group="pager-search", exit_on_error=False)
    def run_search(self, start: tuple[int, int], backwards: bool) -> None:
        worker = get_current_worker()
        self.searching = True
        self.app.call_from_thread(self.tick_status)
        try:
            with self.lock:
                found = None if worker.is_cancelled else self.pager.search(
                    self._pattern(), regex=self.search_regex, start=start, backwards=backwards, ignore_case=True)
        finally:
            self.searching = False
        if not worker.is_cancelled:
            self.app.call_from_thread(self._search_done, found, backwards)

    def _search_done(self, found: Match | None, backwards: bool) -> None:
        if found is None:
            self.search_result = "no more matches " + ("above" if backwards else "below")  # in the status
        else:
            self.last_match = found
            where = f"line {found.line + 1:,}" + (f" char {found.char + 1:,}" if found.char else "")
            self.search_result = f"match at {where}"
            self.view.go_to(found.line)
            self.view.show_chars(found.char, found.length)
        self.tick_status()
