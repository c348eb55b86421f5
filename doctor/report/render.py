"""Pick a renderer by format name; every renderer takes a MemoryReport (and previews) and returns text.

Previews are the only payload text a report can carry: they are read back from
the session here, once, and only when `include_previews` is asked for.
"""

from __future__ import annotations

from doctor.report.json_text import json_text
from doctor.report.model import MemoryReport

FORMATS = ("text", "json", "markdown", "html")


def render_json(report: MemoryReport, previews: dict | None = None) -> str:
    data = report.to_dict()
    if previews is not None:
        data["previews"] = [preview.to_json() for preview in previews.values()]
    return json_text(data)


def _previews(report: MemoryReport, session) -> dict:
    from doctor.report.previews import collect_previews

    if report.retention is None:
        return {}
    return collect_previews(session, report.retention.largest(report.top), path_style=report.path_style)


def render(report: MemoryReport, fmt: str = "text", *, include_previews: bool = False, session=None) -> str:
    """`fmt` is one of FORMATS; `session` (a LoadedSession) is re-read for previews only."""
    previews = _previews(report, session) if include_previews else None
    if fmt == "json":
        return render_json(report, previews)
    if fmt == "text":
        from doctor.report.text import render_text

        return render_text(report, previews)
    if fmt == "markdown":
        from doctor.report.markdown import render_markdown

        return render_markdown(report, previews)
    if fmt == "html":
        from doctor.report.html import render_html

        return render_html(report, previews)
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
