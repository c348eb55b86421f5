"""The plain-text report: what `/doctor memory` prints and what a terminal shows without the TUI.

Qwen's retention lines come first, unchanged, so they can be diffed against Qwen's
own output; doctor's additions follow under their own headings.
"""

from __future__ import annotations

from doctor.report.model import MemoryReport, present_path
from doctor.report.qwen_text import format_tool_result_retention


def _budget_text(chars: float) -> str:
    return "∞" if chars == float("inf") else f"{int(chars):,}"


def render_text(report: MemoryReport, **_options) -> str:
    lines: list[str] = []
    source = report.source
    where = present_path(source.path, report.path_style) if source.path else "live history"
    lines.append(f"doctor memory — {source.agent} — {where}")
    lines.append("")
    if report.retention is None:
        lines.append(report.retention_unavailable or "Tool result retention unavailable")
    else:
        lines.append(format_tool_result_retention(report.retention.stats))
        lines.extend(_per_tool(report))
    if report.issues:
        lines.append("")
        lines.append("Input problems")
        lines.extend(f"  {issue}" for issue in report.issues)
    return "\n".join(lines) + "\n"


def _per_tool(report: MemoryReport) -> list[str]:
    summaries = report.retention.per_tool()
    if not summaries:
        return []
    lines = ["", "By tool (chars as Qwen estimates them; tokens ≈ chars / 4)"]
    lines.append(f"  {'tool':<28} {'results':>7} {'chars':>12} {'tokens':>9} {'largest':>10} {'oversized':>9} {'budget':>9}")
    for summary in summaries:
        lines.append(
            f"  {summary.tool or '(no name)':<28.28} {summary.count:>7} {int(summary.chars):>12,} {summary.tokens:>9,}"
            f" {int(summary.largest):>10,} {summary.oversized:>9} {_budget_text(summary.budget.chars):>9}"
        )
    return lines
