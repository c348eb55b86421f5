"""The Tools and Results tables: DataTables patched in place, sortable by key or click.

`patch(rows)` diffs by row key (tool name, result ordinal): new rows are added, changed
cells updated, vanished rows removed, so a live refresh keeps the cursor and scroll
where the user left them (memray's live table does the same).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable

from doctor.tui import format as fmt

OVERSIZED = "bold red"
ERROR = "yellow"


class PatchedTable(DataTable):
    """A DataTable with stable column keys, in-place patching and a remembered sort."""

    COLUMNS: tuple[tuple[str, str], ...] = ()  # (key, label)
    DEFAULT_SORT = ""
    BINDINGS = [
        Binding("s", "cycle_sort", "Sort", id="table.sort"),
        Binding("r", "reverse_sort", "Reverse", id="table.reverse"),
    ]

    CHUNK = 50  # rows patched per frame by patch_gradually

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._patching = 0
        self.sort_column = self.DEFAULT_SORT
        self.sort_reverse = True

    def on_mount(self) -> None:
        for key, label in self.COLUMNS:
            self.add_column(label, key=key)

    def patch(self, rows: dict[str, tuple]) -> None:
        """Make the table hold exactly `rows` ({row key: cells}), touching only what changed."""
        self._patching += 1  # a gradual patch still running is superseded
        existing = {row_key.value for row_key in self.rows}
        for row_key in existing - rows.keys():
            self.remove_row(row_key)
        self._patch_rows(rows.items(), existing)
        self.apply_sort()

    def patch_gradually(self, keys: list[str], cells_of) -> None:
        """`patch`, for many rows: `cells_of(i)` builds row i's cells, `CHUNK` rows per frame.

        Filling thousands of rows at once blocked the event loop for a second on a 50 MB
        dump (benchmarks/bench_tui_frames.py); in chunks each frame stays short, and the
        sort runs once at the end.
        """
        self._patching += 1
        generation = self._patching
        existing = {row_key.value for row_key in self.rows}
        for row_key in existing - set(keys):
            self.remove_row(row_key)

        def step(start: int) -> None:
            if generation != self._patching or not self.is_attached:
                return
            stop = min(len(keys), start + self.CHUNK)
            self._patch_rows(((keys[i], cells_of(i)) for i in range(start, stop)), existing)
            if stop < len(keys):
                self.call_after_refresh(step, stop)
            else:
                self.apply_sort()

        step(0)

    def _patch_rows(self, rows, existing: set[str]) -> None:
        keys = [key for key, _ in self.COLUMNS]
        for row_key, cells in rows:
            if row_key in existing:
                current = self.get_row(row_key)
                for column, old, new in zip(keys, current, cells):
                    if str(old) != str(new) or getattr(old, "value", None) != getattr(new, "value", None):
                        self.update_cell(row_key, column, new)
            else:
                self.add_row(*cells, key=row_key)

    def apply_sort(self) -> None:
        if self.sort_column and self.row_count:
            self.sort(self.sort_column, reverse=self.sort_reverse)

    def sort_by(self, column: str) -> None:
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column = column
            self.sort_reverse = column not in ("tool", "layer", "pointer", "ordinal", "turn")
        self.apply_sort()
        self.border_subtitle = f"sorted by {dict(self.COLUMNS)[column]} {'↓' if self.sort_reverse else '↑'}"

    def action_cycle_sort(self) -> None:
        keys = [key for key, _ in self.COLUMNS]
        index = keys.index(self.sort_column) if self.sort_column in keys else -1
        self.sort_by(keys[(index + 1) % len(keys)])

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort_column or self.COLUMNS[0][0])

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
    COLUMNS = (("tool", "tool"), ("count", "results"), ("chars", "chars"), ("tokens", "tokens"),
               ("largest", "largest"), ("oversized", "oversized"), ("errors", "errors"), ("budget", "budget"),
               ("layers", "bounded by"))
    DEFAULT_SORT = "chars"

    def show(self, analysis) -> None:
        rows = {}
        for summary in analysis.per_tool() if analysis else ():
            style = OVERSIZED if summary.oversized else ""
            layers = ", ".join(f"{layer} {count}" for layer, count in summary.by_layer if layer != "none")
            budget_value = summary.budget.chars
            rows[summary.tool] = (
                fmt.text_cell(summary.tool or "(no name)", style),
                fmt.number_cell(summary.count, style),
                fmt.number_cell(summary.chars, style),
                fmt.number_cell(summary.tokens, style),
                fmt.number_cell(summary.largest, style),
                fmt.number_cell(summary.oversized, style),
                fmt.number_cell(summary.errors, ERROR if summary.errors else style),
                fmt.SortableText(fmt.budget(budget_value), budget_value, style),
                fmt.text_cell(layers, "dim"),
            )
        self.patch(rows)


class ResultsTable(PatchedTable):
    COLUMNS = (("ordinal", "#"), ("turn", "turn"), ("tool", "tool"), ("chars", "chars"), ("tokens", "tokens"),
               ("budget", "budget"), ("ratio", "ratio"), ("layer", "bounded by"), ("pointer", "pointer"))
    DEFAULT_SORT = "chars"
    GRADUAL_ABOVE = 300

    def show(self, results, links) -> None:
        """All rows at once for a few hundred results, in per-frame chunks beyond (see patch_gradually)."""
        if len(results) > self.GRADUAL_ABOVE:
            results = list(results)
            if self.sort_column in ("ordinal", "turn", "chars", "tokens"):  # biggest rows first, as sorted
                results.sort(key=lambda r: getattr(r, self.sort_column) or 0, reverse=self.sort_reverse)
            self.patch_gradually([str(r.ordinal) for r in results], lambda i: self._cells(results[i], links))
            return
        self.patch({str(result.ordinal): self._cells(result, links) for result in results})

    @staticmethod
    def _cells(result, links) -> tuple:
        style = OVERSIZED if result.oversized else (ERROR if result.is_error else "")
        ratio = result.budget_ratio
        layer = "" if result.sentinel == "none" else result.sentinel
        return (
            fmt.number_cell(result.ordinal, style),
            fmt.number_cell(result.turn, style),
            fmt.text_cell(result.tool or "(no name)", style),
            fmt.number_cell(result.chars, style),
            fmt.number_cell(result.tokens, style),
            fmt.SortableText(fmt.budget(result.budget.chars), result.budget.chars, style),
            fmt.SortableText("–" if ratio is None else f"{ratio:.2f}", -1 if ratio is None else ratio, style),
            fmt.text_cell(layer, style),
            fmt.text_cell(links.status(result), "dim"),
        )
