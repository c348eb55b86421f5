"""The plain-text report: what `/doctor memory` prints and what a terminal shows without the TUI.

Qwen's retention lines come first after the heading, unchanged, so they can be
diffed against Qwen's own output; doctor's sections follow under their titles,
in Qwen's indentation style. Plain text is never passed through a markup parser,
and every untrusted string was made inert when the sections were built.
"""

from __future__ import annotations

import textwrap

from doctor.report.charts import Chart
from doctor.report.model import MemoryReport
from doctor.report.sections import (
    Paragraph,
    Section,
    Table,
    Verbatim,
    build_sections,
    heading,
)

WIDTH = 100
INDENT = "  "


def _table(table: Table) -> list[str]:
    widths = [max(len(row[i]) for row in (table.columns, *table.rows)) for i in range(len(table.columns))]

    def line(cells) -> str:
        aligned = [cell.rjust(w) if i in table.numeric else cell.ljust(w) for i, (cell, w) in enumerate(zip(cells, widths))]
        return (INDENT + "  ".join(aligned)).rstrip()

    return [line(table.columns), *(line(row) for row in table.rows)]


def _verbatim(block: Verbatim, titled: bool) -> list[str]:
    if block.caption:
        return [INDENT + block.caption, *(INDENT * 2 + line for line in block.lines)]
    return [INDENT + line if titled else line for line in block.lines]


def _paragraph(block: Paragraph) -> list[str]:
    return textwrap.wrap(block.text, WIDTH, initial_indent=INDENT, subsequent_indent=INDENT,
                         break_long_words=False, break_on_hyphens=False) or [""]


def _section(section: Section) -> list[str]:
    lines = [section.title] if section.title else []
    for block in section.blocks:
        if isinstance(block, Table):
            lines += _table(block)
        elif isinstance(block, Chart):
            continue  # drawn in HTML; the tables beside it carry the same figures
        elif isinstance(block, Verbatim):
            lines += _verbatim(block, titled=section.title is not None)
        else:
            lines += _paragraph(block)
    return lines


def render_text(report: MemoryReport, previews: dict | None = None) -> str:
    return text_document(heading(report), build_sections(report, previews))


def text_document(title: str, sections) -> str:
    """A heading and sections as plain text (the memory report, and `doctor scan`'s answers)."""
    lines = [title]
    for section in sections:
        lines += ["", *_section(section)]
    return "\n".join(lines) + "\n"
