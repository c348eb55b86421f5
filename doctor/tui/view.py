"""A report made ready for the screen, on the loader's worker thread.

Everything that walks the whole report (per-tool sums, the biggest result, the per-turn
chart, the audit's summary line, one row of rich `Text` cells per result and the width of
every column) is done here, off the UI thread: on a 50 MB dump (about 3,000 results) it
held the event loop for a quarter of a second when it ran in `MemoryScreen.show`. The
screen only hands these prepared pieces to its widgets.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from doctor.report.model import MemoryReport
from doctor.tui.overview_panels import OverviewView, overview_view, source_title
from doctor.tui.spill_links import SpillLinks
from doctor.tui.table_cells import (RESULTS_COLUMNS, TOOLS_COLUMNS, TableRows, column_labels, prepared_rows,
                                    result_cells, tool_cells)


@dataclass(frozen=True)
class ResultFilterKey:
    """What the Results filter looks at, per row (no ResultMeasure is built on the UI thread)."""

    tool: str
    ordinal: str
    sentinel: str
    oversized: bool


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
    labels: tuple[tuple[str, str], ...] = ()  # table column key -> header, in the session's terms


def prepare(report: MemoryReport, *, with_rows: bool = True) -> ReportView:
    """The screen's view of `report` (runs on a worker thread; the UI thread only applies it).

    `with_rows=False`: the figures only, the Results table left empty (its rows, one per result, are
    most of the work): what the screen paints first while the loader finishes the report.
    """
    links = SpillLinks.of(report.spill)
    analysis = report.retention
    results = list(analysis.results) if analysis else []
    term = report.layer_term
    terms = report.terms
    listed = results if with_rows else []
    rows = {str(result.ordinal): result_cells(result, links, term, terms) for result in listed}
    filters = {str(result.ordinal): ResultFilterKey((result.tool or "").lower(), str(result.ordinal),
                                                    term(result.sentinel or "").lower(), bool(result.oversized))
               for result in listed}
    prepared = prepared_rows(RESULTS_COLUMNS, rows)
    return ReportView(
        report=report,
        links=links,
        title=source_title(report),
        overview=overview_view(report),
        tools=prepared_rows(TOOLS_COLUMNS, tool_cells(analysis, term, terms)),
        results=prepared,
        result_filters=tuple(filters[key] for key in prepared.keys),
        biggest_ordinal=analysis.largest(1)[0].ordinal if results else None,
        result_count=len(results),
        labels=tuple(column_labels(terms).items()),
    )
