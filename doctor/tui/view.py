"""A report made ready for the screen, on the loader's worker thread.

Everything that walks the whole report (per-tool sums, the biggest result, the per-turn
chart, the audit's summary line, one row of rich `Text` cells per result and the width of
every column) is done here, off the UI thread: on a 50 MB dump (about 3,000 results) it
held the event loop for a quarter of a second when it ran in `MemoryScreen.show`. The
screen only hands these prepared pieces to its widgets.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from doctor.report.model import MemoryReport
from doctor.tui.spill_links import SpillLinks


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


@dataclass(frozen=True)
class ResultFilterKey:
    """What the Results filter looks at, per row (no ResultMeasure is built on the UI thread)."""

    tool: str
    ordinal: str
    sentinel: str
    oversized: bool


@dataclass(frozen=True)
class OverviewView:
    alarm: Text
    alarm_class: str
    offender: object
    qwen: object
    turns: object
    channels: object
    spill: object
    process: object | None


@dataclass(frozen=True)
class ReportView:
    report: MemoryReport
    links: SpillLinks
    title: Text
    overview: OverviewView
    tools: TableRows
    results: TableRows
    result_filters: tuple[ResultFilterKey, ...] = ()
    biggest_ordinal: int | None = None
    result_count: int = 0


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


def prepare(report: MemoryReport) -> ReportView:
    """The screen's view of `report` (runs on a worker thread; the UI thread only applies it)."""
    from doctor.tui.widgets.overview import overview_view, source_title
    from doctor.tui.widgets.tables import ResultsTable, ToolsTable

    links = SpillLinks.of(report.spill)
    analysis = report.retention
    results = list(analysis.results) if analysis else []
    rows = {str(result.ordinal): ResultsTable.cells(result, links) for result in results}
    filters = {str(result.ordinal): ResultFilterKey((result.tool or "").lower(), str(result.ordinal),
                                                    (result.sentinel or "").lower(), bool(result.oversized))
               for result in results}
    prepared = ResultsTable.rows(rows)
    return ReportView(
        report=report,
        links=links,
        title=source_title(report),
        overview=overview_view(report),
        tools=ToolsTable.rows(ToolsTable.cells_of(analysis)),
        results=prepared,
        result_filters=tuple(filters[key] for key in prepared.keys),
        biggest_ordinal=analysis.largest(1)[0].ordinal if results else None,
        result_count=len(results),
    )
