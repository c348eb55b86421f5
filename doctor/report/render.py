"""Pick a renderer by format name; every renderer takes a MemoryReport and returns text."""

from __future__ import annotations

import json

from doctor.report.model import MemoryReport

FORMATS = ("text", "json", "markdown", "html")


def render_json(report: MemoryReport, **_options) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def render(report: MemoryReport, fmt: str = "text", **options) -> str:
    """`fmt` is one of FORMATS; options (e.g. include_previews) go to the renderer."""
    if fmt == "json":
        return render_json(report, **options)
    if fmt == "text":
        from doctor.report.text import render_text

        return render_text(report, **options)
    if fmt == "markdown":
        from doctor.report.markdown import render_markdown

        return render_markdown(report, **options)
    if fmt == "html":
        from doctor.report.html import render_html

        return render_html(report, **options)
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
