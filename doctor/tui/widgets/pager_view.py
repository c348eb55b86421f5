"""A virtual view of a spill file: Line API, only visible lines are read and rendered.

`render_line(y)` draws from a cache of lines; a miss asks a worker thread for the block
around it and draws a placeholder, and the block's arrival refreshes just those rows.
Nothing on the UI thread reads the file, so a 1 GB single line or a file still being
indexed never blocks a frame.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from doctor.tui.line_source import Line, LineSource

BLOCK = 128
CACHE_LINES = 8_192


class LinesLoaded(Message):
    def __init__(self, block: int, lines: list[Line]) -> None:
        super().__init__()
        self.block = block
        self.lines = lines


class PagerView(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"pager--gutter", "pager--current", "pager--match", "pager--more"}
    DEFAULT_CSS = """
    PagerView { background: $surface; }
    PagerView > .pager--gutter { color: $text-muted; }
    PagerView > .pager--current { background: $accent 30%; }
    PagerView > .pager--match { background: $warning 60%; color: $text; }
    PagerView > .pager--more { color: $text-muted; text-style: italic; }
    """

    current = reactive(0)

    def __init__(self, source: LineSource, **kwargs) -> None:
        super().__init__(**kwargs)
        self.source = source
        self._lines: OrderedDict[int, Line] = OrderedDict()
        self._pending: set[int] = set()
        self._width = 0
        self.highlight: re.Pattern[str] | None = None

    # -- size --------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return self.source.known_lines

    def gutter_width(self) -> int:
        return len(f"{max(self.line_count, 1):,}") + 3

    def update_size(self) -> None:
        self.virtual_size = Size(self._width + self.gutter_width(), self.line_count)

    def on_mount(self) -> None:
        self.update_size()

    # -- lines --------------------------------------------------------------------

    def forget(self, first: int) -> None:
        """Drop cached lines from `first` on (the file grew: the last line may have changed)."""
        for number in [n for n in self._lines if n >= first]:
            del self._lines[number]
        self._pending = {b for b in self._pending if (b + 1) * BLOCK <= first}

    def forget_all(self, source: LineSource | None = None) -> None:
        if source is not None:
            self.source = source
        self._lines.clear()
        self._pending.clear()
        self._width = 0
        self.update_size()
        self.refresh()

    def _request(self, block: int) -> None:
        if block in self._pending:
            return
        self._pending.add(block)
        self._fetch(block)

    @work(thread=True, group="pager-fetch", exit_on_error=False)
    def _fetch(self, block: int) -> None:
        lines = self.source.lines(block * BLOCK, BLOCK)
        self.post_message(LinesLoaded(block, lines))

    def on_lines_loaded(self, message: LinesLoaded) -> None:
        self._pending.discard(message.block)
        widest = self._width
        for line in message.lines:
            self._lines[line.number] = line
            widest = max(widest, len(line.text) + (len(self._more(line)) if line.more_bytes else 0))
        while len(self._lines) > CACHE_LINES:
            self._lines.popitem(last=False)
        if widest != self._width:
            self._width = widest
            self.update_size()
        self.refresh()

    @staticmethod
    def _more(line: Line) -> str:
        return f" … [{line.more_bytes:,} more bytes on this line]"

    def line_text(self, number: int) -> str | None:
        line = self._lines.get(number)
        return None if line is None else line.text

    # -- rendering -----------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        number = scroll_y + y
        width = self.size.width
        if number >= self.line_count:
            return Strip.blank(width, self.rich_style)
        gutter_width = self.gutter_width()
        gutter_style = self.get_component_rich_style("pager--gutter")
        gutter = Strip([Segment(f"{number + 1:>{gutter_width - 3},} │ ", gutter_style)])
        line = self._lines.get(number)
        if line is None:
            block = number // BLOCK
            self._request(block)
            body = Strip([Segment("…", gutter_style)])
        else:
            text = Text(line.text, style=self.rich_style, no_wrap=True)
            if self.highlight is not None:
                text.highlight_regex(self.highlight, self.get_component_rich_style("pager--match"))
            if line.more_bytes:
                text.append(self._more(line), style=self.get_component_rich_style("pager--more"))
            body = Strip(list(text.render(self.app.console, end="")))
            body = body.crop(scroll_x, scroll_x + max(0, width - gutter_width))
        strip = Strip.join([gutter, body]).extend_cell_length(width, self.rich_style)
        if number == self.current:
            strip = strip.apply_style(self.get_component_rich_style("pager--current"))
        return strip.crop(0, width)

    def watch_current(self, old: int, new: int) -> None:
        self.refresh()

    def go_to(self, number: int) -> None:
        number = max(0, min(number, max(self.line_count - 1, 0)))
        self.current = number
        height = self.scrollable_content_region.height
        if not (self.scroll_y <= number < self.scroll_y + height):
            self.scroll_to(y=max(0, number - height // 3), animate=False)
        self.refresh()
