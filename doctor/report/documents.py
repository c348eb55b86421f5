"""Sections rendered as one document in a human format: the one dispatch every face's answer goes through.

`doctor scan`'s answers, its fleet what-if and `doctor whatif` build `Section`s
(doctor.report.sections) and leave the format to this module; each renderer is imported only
when its format is asked for.
"""

from __future__ import annotations


def render_document(title: str, sections: list, fmt: str) -> str:
    """`sections` under `title` as Markdown, HTML or (anything else) plain text."""
    if fmt == "markdown":
        from doctor.report.markdown import markdown_document

        return markdown_document(title, sections)
    if fmt == "html":
        from doctor.report.html import html_document

        return html_document(title, sections)
    from doctor.report.text import text_document

    return text_document(title, sections)
