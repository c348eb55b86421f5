"""The Tools and Results tables: DataTables patched in place, sortable by key or click.

`show_rows(rows)` diffs by row key (tool name, result ordinal): new rows are added, changed
cells updated, vanished rows removed, so a live refresh keeps the cursor and scroll
where the user left them (memray's live table does the same). The rows come prepared
(cells built and measured on the loader's worker, see `doctor.tui.view`); a first fill,
or a change of more than `REBUILD_ABOVE` rows (a filter), is loaded in one bulk step.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable
from textual.widgets._data_table import Row, RowKey

from doctor.tui.table_cells import DEFAULT_SORT as SORTED_BY, RESULTS_COLUMNS, TOOLS_COLUMNS, TableRows


def show_sort(table: DataTable, labels: dict[str, str], sort_column: str, reverse: bool) -> None:
    """The sorted column's header carries ↓ or ↑ (with equal values a sort shows no other change)."""
    for column in table.columns.values():
        label = labels[column.key.value]
        if column.key.value == sort_column:
            column.label = Text(f"{label} {'↓' if reverse else '↑'}", style="bold")
            column.content_width = max(column.content_width, column.label.cell_len)
            if column.auto_width:
                column.width = max(column.width, column.content_width)
        else:
            column.label = Text(label)
    table._require_update_dimensions = True
    table._update_count += 1
    table.refresh()


class PatchedTable(DataTable):
    """A DataTable with stable column keys, in-place patching and a remembered sort."""

    COLUMNS: tuple[tuple[str, str], ...] = ()  # (key, label)
    DEFAULT_SORT = ""
    BINDINGS = [
        Binding("s", "cycle_sort", "Sort", id="table.sort"),
        Binding("r", "reverse_sort", "Reverse", id="table.reverse"),
        # DataTable's home/end scroll sideways; in a list of rows they mean the first and last row.
        Binding("home", "first_row", "First row", id="table.first", show=False),
        Binding("end", "last_row", "Last row", id="table.last", show=False),
    ]

    REBUILD_ABOVE = 64  # rows added or removed beyond which the table is rebuilt in bulk

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.sort_column = self.DEFAULT_SORT
        self.sort_reverse = True
        self.labels = dict(self.COLUMNS)  # column key -> its header (a session's agent may rename some)

    def on_mount(self) -> None:
        for key, label in self.COLUMNS:
            self.add_column(Text(self.labels[key]), key=key)
        self._show_sort()

    def relabel(self, labels: dict[str, str]) -> None:
        """Headers in the session's terms (`chars` -> `bytes` for Codex, `budget` -> `limit`)."""
        wanted = {**dict(self.COLUMNS), **labels}
        if wanted != self.labels:
            self.labels = wanted
            if self.columns:
                self._show_sort()

    def _show_sort(self) -> None:
        show_sort(self, self.labels, self.sort_column, self.sort_reverse)

    def show_rows(self, rows: TableRows) -> None:
        """Make the table hold exactly `rows`: patched in place when little changed, else rebuilt in bulk.

        Adding rows one by one (DataTable.add_row measures every cell on the next idle, and
        each add bumps the cursor) cost ~0.1 ms a row on the UI thread; a 50 MB dump's 3,000
        results blocked the loop for a second in one go, or ~0.1-0.2 s a frame in chunks
        (benchmarks/bench_tui_frames.py). The bulk path enters the prepared rows directly
        and sets the column widths from the widths measured on the worker.
        """
        wanted = set(rows.keys)
        existing = {row_key.value for row_key in self.rows}
        removed = existing - wanted
        added = len(wanted - existing)
        if not existing or len(removed) + added > self.REBUILD_ABOVE:
            self._rebuild(rows)
            return
        selected = self.selected_key()
        self._patch(rows, existing, removed)
        if selected in wanted:  # the cursor follows its result (DataTable keeps the row index, not the row)
            self.move_to(selected)

    def _patch(self, rows: TableRows, existing: set[str], removed: set[str]) -> None:
        for row_key in removed:
            self.remove_row(row_key)
        columns = [key for key, _ in self.COLUMNS]
        for row_key, cells in zip(rows.keys, rows.cells):
            if row_key in existing:
                current = self.get_row(row_key)
                for column, old, new in zip(columns, current, cells):
                    if str(old) != str(new) or getattr(old, "value", None) != getattr(new, "value", None):
                        self.update_cell(row_key, column, new)
            else:
                self.add_row(*cells, key=row_key)
        self.apply_sort()

    def _rebuild(self, rows: TableRows) -> None:
        selected = self.selected_key()
        if self.row_count:
            self.clear()
        self._append_rows(rows)
        self.apply_sort()
        if selected is not None and selected in set(rows.keys):
            self.move_to(selected)

    def _append_rows(self, rows: TableRows) -> None:
        """What `add_row` does for each row, for all of them at once, widths known beforehand."""
        if not rows.keys:
            return
        columns = self.ordered_columns
        column_keys = [column.key for column in columns]
        locations, data, metadata = self._row_locations, self._data, self.rows
        first = self.row_count
        for index, (key, cells) in enumerate(zip(rows.keys, rows.cells), first):
            row_key = RowKey(key)
            locations[row_key] = index
            data[row_key] = dict(zip(column_keys, cells))
            metadata[row_key] = Row(row_key, 1)
        for position, column in enumerate(columns):
            widest = max((widths[position] for widths in rows.widths if position < len(widths)), default=0)
            column.content_width = max(column.content_width, widest)
        self._require_update_dimensions = True  # virtual size on the next idle; nothing left to measure
        self._update_count += 1
        self.cursor_coordinate = self.cursor_coordinate
        if first == 0 and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()
        self.check_idle()
        self.refresh()

    def apply_sort(self) -> None:
        """Sort by the remembered column; the cursor stays on its row, not on its row number."""
        if self.sort_column and self.row_count:
            selected = self.selected_key()
            self.sort(self.sort_column, reverse=self.sort_reverse)
            if selected is not None:
                self.move_to(selected)

    def sort_by(self, column: str) -> None:
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column = column
            self.sort_reverse = column not in ("tool", "layer", "pointer", "ordinal", "turn")
        self.apply_sort()
        self._show_sort()

    def action_cycle_sort(self) -> None:
        keys = [key for key, _ in self.COLUMNS]
        index = keys.index(self.sort_column) if self.sort_column in keys else -1
        self.sort_by(keys[(index + 1) % len(keys)])

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort_column or self.COLUMNS[0][0])

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0, column=0, animate=False)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1, column=0, animate=False)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(event.column_key.value)

    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:
            return None

    def move_to(self, row_key: str) -> bool:
        try:
            index = self.get_row_index(row_key)
        except Exception:
            return False
        self.move_cursor(row=index, animate=False)
        return True


class ToolsTable(PatchedTable):
    COLUMNS = TOOLS_COLUMNS
    DEFAULT_SORT = SORTED_BY


class ResultsTable(PatchedTable):
    COLUMNS = RESULTS_COLUMNS
    DEFAULT_SORT = SORTED_BY
