"""A report in one line: what `--follow` prints on each change and a host shows after the TUI closes."""

from __future__ import annotations

from doctor.report.model import MemoryReport


def summary_line(report: MemoryReport | None) -> str:
    """Qwen's counters, the way a person scans them: results, chars retained, largest, oversized."""
    if report is None:
        return "no report"
    stats = report.qwen_stats
    if stats is None:
        return report.retention_unavailable or "tool result retention unavailable"
    warnings = sum(issue.severity == "warning" for issue in report.issues)
    return (
        f"{stats.tool_result_count} tool results, {int(stats.total_chars):,} chars retained "
        f"(≈{stats.total_tokens:,} tokens), largest {int(stats.largest_result_chars):,}, "
        f"{stats.oversized_result_count} oversized"
        + (f", {warnings} input warning(s)" if warnings else "")
    )
