"""A report in one line: what `--follow` prints on each change and a host shows after the TUI closes."""

from __future__ import annotations

from doctor.report.model import MemoryReport


def summary_line(report: MemoryReport | None) -> str:
    """The counters, the way a person scans them: results, size, largest, oversized; Qwen's for a Qwen
    session, the agent's own measure for another agent's (`doctor.report.terms`)."""
    if report is None:
        return "no report"
    stats = report.qwen_stats
    if stats is None:
        return report.retention_unavailable or "tool result retention unavailable"
    warnings = sum(issue.severity == "warning" for issue in report.issues)
    terms = report.terms
    size, tokens, largest = terms.totals(report.retention)
    figures = (f"{int(size):,} {terms.unit} sent (≈{tokens:,} tokens by {terms.estimate})" if terms.own
               else f"{int(size):,} chars retained (≈{tokens:,} tokens)")
    return (
        f"{stats.tool_result_count} tool results, {figures}, largest {int(largest):,}, "
        f"{stats.oversized_result_count} oversized"
        + (f", {warnings} input warning(s)" if warnings else "")
    )
