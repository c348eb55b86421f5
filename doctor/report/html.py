"""The HTML report, for support tickets: one self-contained file, no script, no external resource.

Same sections as the text report. Every string is HTML-escaped, and a Content
Security Policy forbids scripts and remote loads, so even a tool name crafted as
markup stays text when the file is opened in a browser.
"""

from __future__ import annotations

import re
from html import escape

from doctor.report.charts import Chart, svg
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

_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #fff;
       max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.35rem; } h2 { font-size: 1.1rem; margin-top: 1.8rem; border-bottom: 1px solid #d0d7de; }
table { border-collapse: collapse; margin: .6rem 0; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: .25rem .55rem; text-align: left; vertical-align: top; }
td.path { overflow-wrap: anywhere; }  /* long paths and pointers wrap on screen; the text stays whole to select */
th { background: #f6f8fa; } td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
pre { background: #f6f8fa; padding: .7rem; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
code { background: #f6f8fa; padding: 0 .2rem; }
.caption { font-weight: 600; margin-bottom: .2rem; }
figure { margin: .6rem 0; display: block; max-width: 100%; }
svg.chart { display: block; width: 100%; max-width: 560px; height: auto; }  /* scales with the page */
div.table { max-width: 100%; overflow-x: auto; }  /* a table wider than a phone scrolls in its box, the page does not */
"""


# A cell holding an unbroken run this long (a path, a pointer, a digest) may break anywhere, so it wraps
# instead of widening the page; tool names and words keep breaking only between words.
_PATH_LIKE = re.compile(r"\S{24,}")


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"


def _paragraph(block: Paragraph) -> str:
    body = "".join(f"<code>{escape(text)}</code>" if is_code else escape(text) for text, is_code in block.pieces())
    return f"<p>{body}</p>"


def _table(table: Table) -> str:
    def kind(i: int, cell: str) -> str:
        if i in table.numeric:
            return " class=number"
        return " class=path" if _PATH_LIKE.search(cell) else ""

    def cells(tag: str, row) -> str:
        return "".join(f"<{tag}{kind(i, cell)}>{escape(cell)}</{tag}>" for i, cell in enumerate(row))

    rows = "".join(f"<tr>{cells('td', row)}</tr>" for row in table.rows)
    return (f'<div class="table"><table><thead><tr>{cells("th", table.columns)}</tr></thead><tbody>{rows}</tbody>'
            "</table></div>")


def _verbatim(block: Verbatim) -> str:
    caption = f'<div class="caption">{escape(block.caption)}</div>' if block.caption else ""
    return f"{caption}<pre>{escape(chr(10).join(block.lines))}</pre>"


def _section(section: Section) -> str:
    title = section.title or QWEN_SECTION_TITLE
    parts = [f'<section id="{_slug(section.title or "qwen-retention")}"><h2>{escape(title)}</h2>']
    for block in section.blocks:
        if isinstance(block, Table):
            parts.append(_table(block))
        elif isinstance(block, Chart):
            parts.append(f'<figure>{svg(block)}</figure>')
        elif isinstance(block, Verbatim):
            parts.append(_verbatim(block))
        else:
            parts.append(_paragraph(block))
    parts.append("</section>")
    return "".join(parts)


def render_html(report: MemoryReport, previews: dict | None = None) -> str:
    return html_document(heading(report), build_sections(report, previews))


def html_document(title: str, sections) -> str:
    """A heading and sections as one self-contained page (the memory report, and `doctor scan`'s answers)."""
    title = escape(title)
    body = "\n".join(_section(section) for section in sections)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>{title}</h1>\n{body}\n</main>\n</body>\n</html>\n"
    )
