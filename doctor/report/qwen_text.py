"""Qwen Code 0.24.4's own retention lines (`formatToolResultRetention`), word for word.

Kept apart from doctor's richer text so a test can compare these lines with
what Qwen prints for the same recording.
"""

from __future__ import annotations

from doctor.core.jsvalues import js_number
from doctor.core.retention import RetentionStats

COMPRESS_HINT = (
    "  Hint: oversized tool results stay in context and tax every later turn; /compress can reclaim space."
)


def _n(value: float) -> str:
    """JS template-literal formatting of a number (integers without a decimal point)."""
    return js_number(value)


def format_tool_result_retention(stats: RetentionStats) -> str:
    lines = [
        "Tool result retention",
        f"  Tool results in history: {stats.tool_result_count}",
        f"  Total retained: {_n(stats.total_chars)} chars",
        f"  Largest result: {_n(stats.largest_result_chars)} chars",
        f"  Oversized results (above tool budget): {stats.oversized_result_count}",
        f"  Oversized also rendered in UI history: {stats.large_outputs_in_ui_history} item(s)",
        "  Oversized also in compression input: "
        + ("yes (shared by reference, no extra copy)" if stats.present_in_compression_input else "no"),
    ]
    if stats.oversized_result_count > 0:
        lines.append(COMPRESS_HINT)
    return "\n".join(lines)
