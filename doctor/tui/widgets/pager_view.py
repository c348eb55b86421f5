"""A virtual view of a spill file over the pager engine: only visible lines are read and drawn.

`render_line(y)` draws from two small caches: line blocks from `Pager.page` (each line
cut at `PAGE_CHARS`) and, for the parts of long lines beyond that, char windows from
`Pager.char_window`. A miss asks a worker thread for what is missing and draws a
placeholder; the answer refreshes the view. Nothing on the UI thread reads the file, so
a 1 GB single line or a file still being indexed never blocks a frame, and moving
sideways in such a line costs one bounded window read per visible line.

The engine is driven from one thread at a time: every call goes through `lock`.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict

from rich.segment import Segment
from rich.text import Text
from textual import work
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from doctor.spill.pager import HEX_ROW_BYTES, Line, Pager
from doctor.tui.format import inert

BLOCK = 128  # lines per page request
PAGE_CHARS = 1024  # chars of each line kept with its page; the rest comes in windows
WINDOW_CHARS = 4096  # chars per char-window request
CACHE_LINES = 4096
CACHE_WINDOWS = 1024


class LinesLoaded(Message):
    def __init__(self, block: int, lines: list[Line]) -> None:
        super().__init__()
        self.block = block
        self.lines = lines


class WindowsLoaded(Message):
    def __init__(self, windows: dict[tuple[int, int], str]) -> None:
        super().__init__()
        self.windows = windows


class PagerView(ScrollView, can_focus=True, inherit_bindings=False):
    """Lines of one `Pager`; `current` is the selected line, `column` the first char shown.

    No bindings of its own: the keys belong to the pager screen, where they have ids
    and can be remapped.
    """

    COMPONENT_CLASSES = {"pager--gutter", "pager--current", "pager--match", "pager--more"}
    DEFAULT_CSS = """
    PagerView { background: $surface; }
    PagerView > .pager--gutter { color: $text-muted; }
    PagerView > .pager--current { background: $accent 30%; }
    PagerView > .pager--match { background: $warning 60%; color: $text; }
    PagerView > .pager--more { color: $text-muted; text-style: bold; }
    """

    current = reactive(0)
    column = reactive(0)

    def __init__(self, pager: Pager, lock: threading.Lock | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.pager = pager
        self.lock = lock or threading.Lock()
        self._lines: OrderedDict[int, Line] = OrderedDict()
        self._windows: OrderedDict[tuple[int, int], str] = OrderedDict()
        self._pending: set[int] = set()
        self._pending_windows: set[tuple[int, int]] = set()
        self._wanted_windows: set[tuple[int, int]] = set()
        self._generation = 0  # bumped when the file is replaced: late answers are dropped
        self.highlight: re.Pattern[str] | None = None

    # -- size --------------------------------------------------------------------

    @property
    def binary(self) -> bool:
        return self.pager.is_binary

    @property
    def indexing(self) -> bool:
        return not self.binary and not self.pager.progress.done

    @property
    def line_count(self) -> int:
        """Lines known so far (all of them once indexed); hex rows for a binary file."""
        if self.binary:
            return (self.pager.size + HEX_ROW_BYTES - 1) // HEX_ROW_BYTES
        count = self.pager.line_count
        if count is not None:
            return count
        return self.pager.progress.lines_seen + 1

    def gutter_width(self) -> int:
        return len(f"{max(self.line_count, 1):,}") + 3

    def body_width(self) -> int:
        return max(1, self.scrollable_content_region.width - self.gutter_width())

    def update_size(self) -> None:
        self.virtual_size = Size(1, self.line_count)  # no horizontal scrolling: `column` pages sideways

    def on_mount(self) -> None:
        self.update_size()

    # -- what is cached --------------------------------------------------------------

    def line_text(self, number: int) -> str | None:
        """The cached start of a line (up to PAGE_CHARS chars), None when not read yet."""
        line = self._lines.get(number)
        return None if line is None else line.text

    def line(self, number: int) -> Line | None:
        return self._lines.get(number)

    def line_bytes(self, number: int) -> int | None:
        """The length of a line in bytes (with its newline), when its neighbours say so."""
        line = self._lines.get(number)
        if line is None or self.binary:
            return None
        following = self._lines.get(number + 1)
        if following is not None:
            return following.byte_offset - line.byte_offset
        if self.pager.line_count is not None and number == self.pager.line_count - 1:
            return self.pager.size - line.byte_offset
        return None

    def forget(self, first: int) -> None:
        """Drop cached lines from `first` on (the file grew: the last line may have changed)."""
        for number in [n for n in self._lines if n >= first]:
            del self._lines[number]
        for key in [k for k in self._windows if k[0] >= first]:
            del self._windows[key]
        self._pending = {b for b in self._pending if (b + 1) * BLOCK <= first}
        self._pending_windows = {k for k in self._pending_windows if k[0] < first}

    def forget_all(self) -> None:
        """The file was truncated or replaced: everything read so far is stale."""
        self._generation += 1
        self._lines.clear()
        self._windows.clear()
        self._pending.clear()
        self._pending_windows.clear()
        self._wanted_windows.clear()
        self.update_size()
        self.refresh()

    # -- reading (workers) --------------------------------------------------------------

    def _request(self, block: int) -> None:
        if block in self._pending:
            return
        self._pending.add(block)
        self._fetch(block, self._generation)

    @work(thread=True, group="pager-fetch", exit_on_error=False)
    def _fetch(self, block: int, generation: int) -> None:
        first = block * BLOCK
        with self.lock:
            if generation != self._generation:
                return
            if self.pager.is_binary:
                rows = self.pager.hex_page(first * HEX_ROW_BYTES, BLOCK * HEX_ROW_BYTES)
                lines = [Line(first + i, row, (first + i) * HEX_ROW_BYTES, False) for i, row in enumerate(rows)]
            else:
                lines = self.pager.page(first, BLOCK, max_line_chars=PAGE_CHARS)
        if generation == self._generation:
            self.post_message(LinesLoaded(block, lines))

    def on_lines_loaded(self, message: LinesLoaded) -> None:
        self._pending.discard(message.block)
        for line in message.lines:
            self._lines[line.number] = line
            self._lines.move_to_end(line.number)
        while len(self._lines) > CACHE_LINES:
            self._lines.popitem(last=False)
        self.refresh()

    def _want_window(self, key: tuple[int, int]) -> None:
        if key in self._pending_windows:
            return
        if not self._wanted_windows:
            self.call_later(self._flush_windows)
        self._wanted_windows.add(key)

    def _flush_windows(self) -> None:
        keys = sorted(self._wanted_windows)
        self._wanted_windows.clear()
        if keys:
            self._pending_windows.update(keys)
            self._fetch_windows(keys, self._generation)

    @work(thread=True, group="pager-fetch", exit_on_error=False)
    def _fetch_windows(self, keys: list[tuple[int, int]], generation: int) -> None:
        windows = {}
        for number, window in keys:
            with self.lock:
                if generation != self._generation:
                    return
                windows[number, window] = self.pager.char_window(number, window * WINDOW_CHARS, WINDOW_CHARS)
        self.post_message(WindowsLoaded(windows))

    def on_windows_loaded(self, message: WindowsLoaded) -> None:
        for key, text in message.windows.items():
            self._pending_windows.discard(key)
            self._windows[key] = text
            self._windows.move_to_end(key)
        while len(self._windows) > CACHE_WINDOWS:
            self._windows.popitem(last=False)
        self.refresh()

    def visible_chars(self, line: Line, start: int, length: int) -> tuple[str, bool] | None:
        """(chars `start`…`start + length` of `line`, whether the line goes on), None while reading."""
        text = line.text
        if not line.truncated or start + length <= len(text):
            return text[start : start + length], line.truncated or len(text) > start + length
        pieces = []
        for window in range(start // WINDOW_CHARS, (start + length) // WINDOW_CHARS + 1):
            chunk = self._windows.get((line.number, window))
            if chunk is None:
                self._want_window((line.number, window))
                return None
            self._windows.move_to_end((line.number, window))
            pieces.append(chunk)
            if len(chunk) < WINDOW_CHARS:  # the line ends in this window
                break
        first = start // WINDOW_CHARS * WINDOW_CHARS
        joined = "".join(pieces)
        goes_on = len(joined) > start - first + length
        return joined[start - first : start - first + length], goes_on

    # -- rendering -----------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_y = self.scroll_offset.y
        number = scroll_y + y
        width = self.scrollable_content_region.width  # not size.width: a vertical scrollbar hid the "›"
        if number >= self.line_count:
            return Strip.blank(width, self.rich_style)
        gutter_width = self.gutter_width()
        body_width = max(1, width - gutter_width)
        gutter_style = self.get_component_rich_style("pager--gutter")
        gutter = Strip([Segment(f"{number + 1:>{gutter_width - 3},} │ ", gutter_style)])
        line = self._lines.get(number)
        shown = None
        if line is None:
            self._request(number // BLOCK)
        else:
            self._lines.move_to_end(number)
            shown = self.visible_chars(line, 0 if self.binary else self.column, body_width)
        if shown is None:
            body = Strip([Segment("…", gutter_style)])
        else:
            chars, goes_on = shown
            text = Text(inert(chars), style=self.rich_style, no_wrap=True)
            if self.highlight is not None:
                text.highlight_regex(self.highlight, self.get_component_rich_style("pager--match"))
            body = Strip(list(text.render(self.app.console, end="")))
            if goes_on or body.cell_length > body_width:
                more = Segment("›", self.get_component_rich_style("pager--more"))
                body = Strip.join([body.crop(0, body_width - 1), Strip([more])])
            else:
                body = body.crop(0, body_width)
        strip = Strip.join([gutter, body]).extend_cell_length(width, self.rich_style)
        if number == self.current:
            strip = strip.apply_style(self.get_component_rich_style("pager--current"))
        return strip.crop(0, width)

    def watch_current(self, old: int, new: int) -> None:
        self.refresh()

    def watch_column(self, old: int, new: int) -> None:
        self.refresh()

    def go_to(self, number: int) -> None:
        number = max(0, min(number, max(self.line_count - 1, 0)))
        self.current = number
        height = self.scrollable_content_region.height
        if not (self.scroll_y <= number < self.scroll_y + height):
            self.scroll_to(y=max(0, number - height // 3), animate=False)
        self.refresh()

    def show_chars(self, start: int, length: int) -> None:
        """Move `column` so chars `start`…`start + length` are on screen (prefer column 0)."""
        width = self.body_width() - 1  # the last cell may hold the "more" marker
        if self.column <= start and start + length <= self.column + width:
            return
        self.column = 0 if start + length <= width else max(0, start - width // 3)
