"""The Markdown report, for issue trackers (GitHub, GitLab, Jira's Markdown).

Same sections as the text report. Untrusted strings are escaped so a tool name
or a path cannot open a link, an HTML tag or a new table cell; preformatted
blocks are fenced with more backticks than they contain, so no content can end
the fence early.
"""

from __future__ import annotations

import re

from doctor.report.charts import Chart
from doctor.report.model import MemoryReport
from doctor.report.sections import (
    QWEN_SECTION_TITLE,
    Paragraph,
    Section,
    Table,
    Verbatim,
    build_sections,
    heading,
)

# What can start emphasis, code, a link, a cell or strikethrough anywhere in a line…
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# …and what starts a heading, list or rule at the start of one.
_LINE_START = re.compile(r"^(\d*)([.)#+=-])")
_BACKTICK_RUN = re.compile(r"`+")


def _escape(text: str) -> str:
    """Prose: Markdown punctuation backslash-escaped, HTML made entities."""
    return _LINE_START.sub(r"\1\\\2", _escape_cell(text))


def _escape_cell(text: str) -> str:
    """A table cell: as prose, but no line-start escape (a cell cannot start a heading or a list), so
    a version or a figure reads 0.24.4 and 166.7 in the Markdown text, not 0\\.24.4."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def _code(text: str) -> str:
    """An inline code span that survives backticks inside it."""
    fence = "`" * (max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0) + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _paragraph(block: Paragraph) -> list[str]:
    return ["".join(_code(text) if is_code else _escape(text) for text, is_code in block.pieces()), ""]


def _table(table: Table) -> list[str]:
    align = ["---:" if i in table.numeric else "---" for i in range(len(table.columns))]

    def row(cells) -> str:
        return "| " + " | ".join(_escape_cell(cell) for cell in cells) + " |"

    return [row(table.columns), "| " + " | ".join(align) + " |", *(row(cells) for cells in table.rows), ""]


def _verbatim(block: Verbatim) -> list[str]:
    body = "\n".join(block.lines)
    fence = "`" * max(3, max((len(run) for run in _BACKTICK_RUN.findall(body)), default=0) + 1)
    caption = [f"**{_escape(block.caption)}**", ""] if block.caption else []
    return [*caption, f"{fence}text", *block.lines, fence, ""]


def _section(section: Section) -> list[str]:
    title = section.title or QWEN_SECTION_TITLE
    lines = [f"## {_escape(title)}", ""]
    for block in section.blocks:
        if isinstance(block, Table):
            lines += _table(block)
        elif isinstance(block, Chart):
            continue  # drawn in HTML; the tables beside it carry the same figures
        elif isinstance(block, Verbatim):
            lines += _verbatim(block)
        else:
            lines += _paragraph(block)
    return lines


def render_markdown(report: MemoryReport, previews: dict | None = None) -> str:
    return markdown_document(heading(report), build_sections(report, previews))


def markdown_document(title: str, sections) -> str:
    """A heading and sections as Markdown (the memory report, and `doctor scan`'s answers)."""
    lines = [f"# {_escape(title)}", ""]
    for section in sections:
        lines += _section(section)
    return "\n".join(lines).rstrip("\n") + "\n"
