"""The Fleet screen: every session of a triage database, sortable and filterable, and a tool's histogram.

`s` cycles the sort column (or click a header), `r` reverses it, `/` filters sessions by
any text of their row (path, agent, version), `enter` opens the highlighted session in the
memory screen when its file is on this machine (scan with `--paths full`), and
highlighting a tool draws its size histogram (results per bin of injected chars, `triage.bins`).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from doctor.triage.bins import bin_label
from doctor.report.figures import figure
from doctor.report.inert import inert_line
from doctor.tui.screens.memory import MemoryScreen

SESSION_COLUMNS = (("path", "Session"), ("agent", "Agent"), ("agent_version", "Version"),
                   ("tool_results", "Results"), ("retained_tokens", "Tokens"), ("oversized", "Oversized"),
                   ("spill_findings", "Spill"))
TOOL_COLUMNS = (("tool", "Tool"), ("results", "Results"), ("chars", "Chars"), ("oversized", "Oversized"))
TEXT_COLUMNS = ("path", "agent", "agent_version", "tool")
BAR_WIDTH = 30


WIDEST = {"path": 36, "tool": 28}  # cells cut so every column stays on screen at 140 columns


def _cell(key: str, value) -> Text:
    if key in TEXT_COLUMNS:
        text = inert_line(value) if value not in (None, "") else "—"
        widest = WIDEST.get(key, 24)
        if len(text) > widest:  # a path keeps its end (the file name), a name its start
            text = "…" + text[-(widest - 1):] if key == "path" else text[:widest - 1] + "…"
        return Text(text, no_wrap=True)
    return Text(figure(value), justify="right")


def histogram_lines(tool: dict) -> list[str]:
    """A tool's bins as text bars, one line per bin (`triage.bins`) from its smallest to its largest."""
    counts = dict(tool["bins"])
    if not counts:
        return ["no results"]
    top = max(counts.values())
    lines = []
    for index in range(min(counts), max(counts) + 1):
        count = counts.get(index, 0)
        bar = "█" * max(1 if count else 0, round(BAR_WIDTH * count / top))
        lines.append(f"{bin_label(index):>7} {bar:<{BAR_WIDTH}} {count:,}")
    return lines


class SortableTable(DataTable):
    BINDINGS = [
        Binding("s", "cycle_sort", "Sort", id="fleet.sort"),
        Binding("r", "reverse_sort", "Reverse", id="fleet.reverse"),
    ]

    def __init__(self, columns, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.spec = columns
        self.sort_column = ""
        self.sort_reverse = True
        self.values: dict[str, dict] = {}

    def on_mount(self) -> None:
        for key, label in self.spec:
            self.add_column(label, key=key)

    def fill(self, rows: list[tuple[str, dict]]) -> None:
        super().clear()
        self.values = dict(rows)
        for key, row in rows:
            self.add_row(*(_cell(column, row.get(column)) for column, _ in self.spec), key=key)
        self.apply_sort()

    def apply_sort(self) -> None:
        """Rows in the order of the sort column (unknown figures last when largest come first)."""
        if not self.sort_column or not self.row_count:
            return
        column = self.sort_column

        def value(key: str) -> tuple:
            raw = self.values[key].get(column)
            if column in TEXT_COLUMNS:
                return (0, str(raw or "").lower())
            return (0, raw) if raw is not None else (-1, 0)

        order = sorted(self.values, key=value, reverse=self.sort_reverse)
        super().clear()
        for key in order:
            self.add_row(*(_cell(c, self.values[key].get(c)) for c, _ in self.spec), key=key)

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

    def compose(self) -> ComposeResult:
        data = self.data
        yield Static(Text(inert_line(f"doctor scan — {len(data.sessions):,} sessions, {len(data.tools):,} tools, "
                                     f"{data.skipped:,} files skipped — {data.database}")), id="title")
        yield Input(placeholder="filter sessions (path, agent, version)…", id="fleet-filter")
        with Horizontal(id="fleet-body"):
            yield SortableTable(SESSION_COLUMNS, id="fleet-sessions")
            with Vertical(id="fleet-side"):
                yield SortableTable(TOOL_COLUMNS, id="fleet-tools")
                yield Static(id="fleet-histogram", classes="panel")
        yield Footer()

    def on_mount(self) -> None:
        self._show_sessions("")
        tools = self.query_one("#fleet-tools", SortableTable)
        tools.fill([(tool["tool"], tool) for tool in self.data.tools])
        self._show_histogram(self.data.tools[0]["tool"] if self.data.tools else None)
        self.query_one("#fleet-sessions", SortableTable).focus()

    def _show_sessions(self, needle: str) -> None:
        needle = needle.lower()
        rows = [(s["session_key"], s) for s in self.data.sessions
                if not needle or needle in " ".join(str(s.get(c) or "") for c in TEXT_COLUMNS).lower()]
        self.query_one("#fleet-sessions", SortableTable).fill(rows)

    def _show_histogram(self, tool_name: str | None) -> None:
        tool = next((t for t in self.data.tools if t["tool"] == tool_name), None)
        panel = self.query_one("#fleet-histogram", Static)
        if tool is None:
            panel.update("")
            return
        head = inert_line(tool["tool"])[:60]
        panel.update(Text("\n".join([f"{head}: results by injected chars (log scale)", *histogram_lines(tool)])))

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
            self.notify(f"{inert_line(path)} is not a file here; scan with --paths full to open sessions.",
                        severity="warning", timeout=4, markup=False)  # a stored path, e.g. an archive member's name
            return
        self.opened = path
        self.app.push_screen(SessionScreen(provider))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "fleet-sessions":
            event.stop()
            self.action_open()
