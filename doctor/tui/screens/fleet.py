"""The Fleet screen: every session of a triage database, sortable and filterable, and a tool's histogram.

`s` cycles the sort column (or click a header; ↓/↑ marks it), `r` reverses it, home / end go
to the first / last row, `/` filters sessions by any text of their row (path, session id,
agent, version): the title counts what the filter keeps and the tools panel sums only
those sessions. `enter` opens the highlighted session in the memory screen when its file,
or the archive holding it, is on this machine (scan with `--paths full`), or says why not.
Highlighting a tool draws its size histogram (results per bin of injected chars, `triage.bins`).
Below 120 columns the side panel moves under the sessions, and long cells are cut to fit.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from doctor.report.figures import figure
from doctor.report.inert import inert_line
from doctor.triage.bins import bin_label
from doctor.triage.fleet import tools_of, why_not_open
from doctor.triage.versions import version_order
from doctor.tui.screens.memory import MemoryScreen
from doctor.tui.widgets.tables import show_sort

SESSION_COLUMNS = (("path", "Session"), ("agent", "Agent"), ("agent_version", "Version"),
                   ("tool_results", "Results"), ("retained_tokens", "Tokens"), ("oversized", "Oversized"),
                   ("spill_findings", "Spill"))
TOOL_COLUMNS = (("tool", "Tool"), ("results", "Results"), ("chars", "Chars"), ("oversized", "Oversized"))
TEXT_COLUMNS = ("path", "agent", "agent_version", "tool")
FILTERED = ("path", "session_id", "agent", "agent_version")  # what `/` looks in
NARROW = 120  # columns below which the side panel goes under the sessions
WIDEST = {"path": 48, "tool": 28}  # the most a cut column takes; `fit` narrows it to the table's width
FEWEST = 10  # the least a cut column keeps
BAR_WIDTH = 30
HELP_SCREENS = (
    ("Fleet", "every session of the triage database: s / r sort and reverse (↓/↑ in the header), "
              "home / end first / last row, / filters, enter opens a session, tab goes to the tools."),
    ("Tools", "the tools of the sessions shown; highlight one to draw its sizes (results per bin of "
              "injected chars: up to 1, 3, 10, 30 …)."),
    ("Session", "enter opens the memory screen of the session (a file or an archive member on this "
                "machine, stored with --paths full); escape comes back."),
)


def _cell(key: str, value, widest: int) -> Text:
    if key in TEXT_COLUMNS:
        text = inert_line(value) if value not in (None, "") else "—"
        if len(text) > widest:  # a path keeps its end (the file name), a name its start
            text = "…" + text[-(widest - 1):] if key == "path" else text[:widest - 1] + "…"
        return Text(text, no_wrap=True)
    return Text(figure(value), justify="right", no_wrap=True)


def histogram_lines(tool: dict, width: int = BAR_WIDTH + 20) -> list[str]:
    """A tool's bins as text bars, one line per bin from its smallest to its largest, `width` columns at most
    (the bars shrink, a count never wraps)."""
    counts = dict(tool["bins"])
    if not counts:
        return ["no results"]
    top = max(counts.values())
    digits = max(len(f"{count:,}") for count in counts.values())
    bar_width = max(4, min(BAR_WIDTH, width - 7 - digits - 2))
    lines = []
    for index in range(min(counts), max(counts) + 1):
        count = counts.get(index, 0)
        bar = "█" * max(1 if count else 0, round(bar_width * count / top))
        lines.append(f"{bin_label(index):>7} {bar:<{bar_width}} {count:>{digits},}")
    return lines


class SortableTable(DataTable):
    BINDINGS = [
        Binding("s", "cycle_sort", "Sort", id="fleet.sort"),
        Binding("r", "reverse_sort", "Reverse", id="fleet.reverse"),
        # DataTable's home/end scroll sideways; in a list of rows they mean the first and last row.
        Binding("home", "first_row", "First row", id="fleet.first", show=False),
        Binding("end", "last_row", "Last row", id="fleet.last", show=False),
    ]

    def __init__(self, columns, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.spec = columns
        self.labels = dict(columns)
        self.sort_column = ""
        self.sort_reverse = True
        self.values: dict[str, dict] = {}
        self.widest = {key: WIDEST.get(key, 24) for key, _ in columns}

    def on_mount(self) -> None:
        self._columns()

    def _columns(self) -> None:
        for key, label in self.spec:
            self.add_column(Text(label), key=key)

    def _row(self, key: str) -> list[Text]:
        return [_cell(column, self.values[key].get(column), self.widest[column]) for column, _ in self.spec]

    def fill(self, rows: list[tuple[str, dict]]) -> None:
        self.values = dict(rows)
        self._show(list(self.values))
        self.apply_sort()

    def _show(self, order: list[str]) -> None:
        cursor = self.highlighted_key()
        super().clear(columns=True)  # columns too: their widths follow the cells again (after `fit` cut them)
        self._columns()
        rows = [(key, self._row(key)) for key in order]
        for key, cells in rows:
            self.add_row(*cells, key=key)
        for index, column in enumerate(self.columns.values()):  # measured here: DataTable settles them late
            arrow = 2 if column.key.value == self.sort_column else 0  # room for " ↓" on the sorted column
            column.content_width = max([column.label.cell_len + arrow, *(cells[index].cell_len for _, cells in rows)])
            column.width = column.content_width
        if cursor in self.values:
            self.move_cursor(row=order.index(cursor), animate=False)

    def apply_sort(self) -> None:
        """Rows in the order of the sort column (unknown figures last when largest come first)."""
        if self.sort_column and self.row_count:
            column = self.sort_column

            def value(key: str) -> tuple:
                raw = self.values[key].get(column)
                if column == "agent_version":
                    return version_order(raw)
                if column in TEXT_COLUMNS:
                    return (0, str(raw or "").lower())
                return (0, raw) if raw is not None else (-1, 0)

            self._show(sorted(self.values, key=value, reverse=self.sort_reverse))
            if self.size.width:
                self.fit(self.size.width)  # the arrow took two cells: the cut column gives them back
        if self.columns:
            show_sort(self, self.labels, self.sort_column, self.sort_reverse)

    def fit(self, width: int) -> None:
        """Cut the text column that takes the most (path, tool) so that every column fits `width` cells."""
        wide = next((key for key, _ in self.spec if key in WIDEST), None)
        if wide is None or not self.columns:
            return
        others = sum(column.get_render_width(self) for column in self.columns.values() if column.key.value != wide)
        chosen = max(FEWEST, min(WIDEST[wide], width - others - 2 * self.cell_padding - 2))
        if chosen != self.widest[wide]:
            self.widest[wide] = chosen
            self._show(self.order())

    def sort_by(self, column: str) -> None:
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column, self.sort_reverse = column, column not in TEXT_COLUMNS
        self.apply_sort()

    def action_cycle_sort(self) -> None:
        keys = [key for key, _ in self.spec]
        following = keys[(keys.index(self.sort_column) + 1) % len(keys)] if self.sort_column in keys else keys[0]
        self.sort_column, self.sort_reverse = following, following not in TEXT_COLUMNS
        self.apply_sort()

    def action_reverse_sort(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.apply_sort()

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0, animate=False)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1, animate=False)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(event.column_key.value)

    def order(self) -> list[str]:
        return [row.key.value for row in self.ordered_rows]

    def highlighted_key(self) -> str | None:
        if not self.row_count:
            return None
        return self.ordered_rows[self.cursor_row].key.value


class SessionScreen(MemoryScreen):
    """The memory screen opened from the Fleet: escape (outside an input) goes back to the Fleet."""

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            super().action_back()
        else:
            self.app.pop_screen()


class FleetScreen(Screen):
    BINDINGS = [
        Binding("slash", "filter", "Filter", id="fleet.filter"),
        Binding("escape", "back", "Back", id="fleet.back", show=False),
        Binding("enter", "open", "Open session", id="fleet.open"),
    ]

    def __init__(self, data, open_session: Callable[[str], object | None] | None = None) -> None:
        super().__init__()
        self.data = data
        self.open_session = open_session
        self.opened: str | None = None
        self.shown_keys: set[str] = {s["session_key"] for s in data.sessions}
        self.tools = data.tools

    def help_intro(self) -> Group:
        from doctor.tui.screens.help import intro

        return intro("doctor scan --tui shows the sessions of a triage database.", HELP_SCREENS,
                     "fleet.filter=ctrl+f,fleet.open=o")

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Input(placeholder="filter sessions (path, session id, agent, version)…", id="fleet-filter")
        with Horizontal(id="fleet-body"):
            yield SortableTable(SESSION_COLUMNS, id="fleet-sessions")
            with Vertical(id="fleet-side"):
                yield SortableTable(TOOL_COLUMNS, id="fleet-tools")
                yield Static(id="fleet-histogram", classes="panel")
        yield Footer()

    def on_mount(self) -> None:
        self._show_sessions("")
        self.query_one("#fleet-sessions", SortableTable).focus()

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "narrow")
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        for table in self.query(SortableTable):
            table.fit(table.size.width)
        tools = self.query_one("#fleet-tools", SortableTable)
        self._show_histogram(tools.highlighted_key())

    def _title(self, needle: str) -> None:
        data, shown = self.data, len(self.shown_keys)
        sessions = f"{len(data.sessions):,} sessions" if not needle else \
            f"{shown:,} of {len(data.sessions):,} sessions match “{needle}”"
        self.query_one("#title", Static).update(Text(inert_line(
            f"doctor scan — {sessions}, {len(self.tools):,} tool{'' if len(self.tools) == 1 else 's'}, "
            f"{data.skipped:,} files skipped — {data.database}"),
            no_wrap=True, overflow="ellipsis"))

    def _show_sessions(self, needle: str) -> None:
        lowered = needle.lower()
        rows = [(s["session_key"], s) for s in self.data.sessions
                if not lowered or lowered in " ".join(str(s.get(c) or "") for c in FILTERED).lower()]
        self.query_one("#fleet-sessions", SortableTable).fill(rows)
        self.shown_keys = {key for key, _ in rows}
        everything = len(rows) == len(self.data.sessions)
        self.tools = self.data.tools if everything else tools_of(self.data.session_tools, self.shown_keys)
        tools = self.query_one("#fleet-tools", SortableTable)
        tools.fill([(tool["tool"], tool) for tool in self.tools])
        self._show_histogram(tools.highlighted_key())
        self._title(needle)

    def _show_histogram(self, tool_name: str | None) -> None:
        tool = next((t for t in self.tools if t["tool"] == tool_name), None)
        panel = self.query_one("#fleet-histogram", Static)
        if tool is None:
            panel.update("")
            return
        width = max(20, panel.content_region.width or BAR_WIDTH + 20)
        head = Text(f"{inert_line(tool['tool'])}: results by injected chars", no_wrap=True, overflow="ellipsis")
        panel.update(Group(head, *(Text(line, no_wrap=True) for line in histogram_lines(tool, width))))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "fleet-filter":
            self._show_sessions(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#fleet-sessions", SortableTable).focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "fleet-tools" and event.row_key is not None:
            self._show_histogram(event.row_key.value)

    def action_filter(self) -> None:
        self.query_one("#fleet-filter", Input).focus()

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#fleet-sessions", SortableTable).focus()

    def action_open(self) -> None:
        table = self.query_one("#fleet-sessions", SortableTable)
        key = table.highlighted_key()
        if key is None:
            return
        path = table.values[key]["path"]
        provider = self.open_session(path) if self.open_session else None
        if provider is None:
            self.notify(inert_line(why_not_open(path)), severity="warning", timeout=6, markup=False)
            return
        self.opened = path
        self.app.push_screen(SessionScreen(provider))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "fleet-sessions":
            event.stop()
            self.action_open()
