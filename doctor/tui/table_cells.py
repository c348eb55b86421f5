"""The Tools and Results tables' rows built from a report: cells, widths and order, no widgets.

Built on the loader's worker (through `doctor.tui.view.prepare`) and handed to the
PatchedTables, which only put them on screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from doctor.report.figures import ratio_text
from doctor.tui import format as fmt

OVERSIZED = "bold red"
ERROR = "yellow"

# (column key, label) of each table, and the column it is sorted by at first.
TOOLS_COLUMNS = (("tool", "tool"), ("count", "results"), ("chars", "chars"), ("tokens", "tokens"),
                 ("largest", "largest"), ("oversized", "oversized"), ("errors", "errors"), ("budget", "budget"),
                 ("layers", "bounded by"))
RESULTS_COLUMNS = (("ordinal", "#"), ("turn", "turn"), ("tool", "tool"), ("chars", "chars"), ("tokens", "tokens"),
                   ("budget", "budget"), ("ratio", "ratio"), ("layer", "bounded by"), ("pointer", "pointer"))
DEFAULT_SORT = "chars"


@dataclass(frozen=True)
class TableRows:
    """Rows for a PatchedTable: keys, cells and each row's cell widths, in the table's default order."""

    keys: tuple[str, ...] = ()
    cells: tuple[tuple, ...] = ()
    widths: tuple[tuple[int, ...], ...] = ()

    def subset(self, indices) -> "TableRows":
        indices = list(indices)
        return TableRows(tuple(self.keys[i] for i in indices), tuple(self.cells[i] for i in indices),
                         tuple(self.widths[i] for i in indices))

    def __len__(self) -> int:
        return len(self.keys)


def cell_width(cell) -> int:
    """What DataTable measures for a cell (a single-line Text: its longest line's cells)."""
    plain = cell.plain if isinstance(cell, Text) else str(cell)
    if "\n" not in plain:
        return cell_len(plain)
    return max(cell_len(line) for line in plain.splitlines())


def table_rows(rows, sort_index: int | None = None, reverse: bool = True) -> TableRows:
    """`rows` ({key: cells}) as TableRows, pre-sorted by column `sort_index` the way DataTable.sort does.

    DataTable.sort is a stable `sorted` over the cells; sorting here with the same key makes
    the table's own sort, after the rows are added, a near-linear pass over sorted data.
    """
    items = list(rows.items())
    if sort_index is not None:
        items = sorted(items, key=lambda item: item[1][sort_index], reverse=reverse)
    return TableRows(tuple(key for key, _ in items), tuple(cells for _, cells in items),
                     tuple(tuple(cell_width(cell) for cell in cells) for _, cells in items))


def prepared_rows(columns, rows: dict[str, tuple]) -> TableRows:
    """{row key: cells} prepared for `PatchedTable.show_rows`, in the default sort's order (for worker threads)."""
    keys = [key for key, _ in columns]
    return table_rows(rows, keys.index(DEFAULT_SORT) if DEFAULT_SORT in keys else None, reverse=True)


def column_labels(terms) -> dict[str, str]:
    """Column headers in the session's terms: its unit (bytes for Codex) and its word for the budget."""
    return {"chars": terms.unit, "budget": terms.limit_word}


def tool_cells(analysis, term, terms) -> dict[str, tuple]:
    """{tool: cells} for every tool (walks all results: run it on a worker for large reports).
    `term` names a layer in the words of the agent whose rules judged the session; `terms` gives
    its figures in the agent's own measure (`doctor.report.terms`)."""
    rows = {}
    for summary in analysis.per_tool() if analysis else ():
        style = OVERSIZED if summary.oversized else ""
        layers = ", ".join(f"{term(layer)} {count}" for layer, count in summary.by_layer if layer != "none")
        budget_value = summary.budget.chars
        rows[summary.tool] = (
            fmt.text_cell(summary.tool or "(no name)", style),
            fmt.number_cell(summary.count, style),
            fmt.number_cell(terms.size(summary), style),
            fmt.number_cell(terms.tokens(summary), style),
            fmt.number_cell(terms.largest(summary), style),
            fmt.number_cell(summary.oversized, style),
            fmt.number_cell(summary.errors, ERROR if summary.errors else style),
            fmt.SortableText(fmt.num(budget_value), budget_value, style),
            fmt.text_cell(layers, "dim"),
        )
    return rows


def result_cells(result, links, term, terms) -> tuple:
    style = OVERSIZED if result.oversized else (ERROR if result.is_error else "")
    ratio = result.budget_ratio
    layer = "" if result.sentinel == "none" else term(result.sentinel)
    return (
        fmt.number_cell(result.ordinal, style),
        fmt.number_cell(result.turn, style),
        fmt.text_cell(result.tool or "(no name)", style),
        fmt.number_cell(terms.size(result), style),
        fmt.number_cell(terms.tokens(result), style),
        fmt.SortableText(fmt.num(result.budget.chars), result.budget.chars, style),
        fmt.SortableText("–" if ratio is None else ratio_text(ratio), -1 if ratio is None else ratio, style),
        fmt.text_cell(layer, style),
        fmt.text_cell(links.status(result), "dim"),
    )
