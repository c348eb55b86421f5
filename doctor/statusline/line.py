"""The status line's figures, from the same analysis as `doctor memory --json`, and the line itself.

`figures_of` reads the analysis `doctor memory` makes with its default options (the session's
agent's rules, doctor's budget config), so each number is the one the JSON report prints:
`toolResultRetention.toolResultCount`, `oversizedResultCount` and the first `retention.perTool`
row (the tool keeping the most); the size and tokens are Qwen's (`totalChars`,
`retention.totalTokens`) for a Qwen session and the agent's own for another agent's
(`agentMeasure.sent`, `sentTokens`, the row's `sent`: a Claude Code line shows what Claude sent,
tokens by Claude's estimate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct

from doctor.report.figures import figure
from doctor.report.inert import inert_line
from doctor.core.context_window import ContextWindow
from doctor.report.window import percent

if TYPE_CHECKING:
    from doctor.core.analysis import RetentionAnalysis


class Figures(Struct, frozen=True):
    results: int
    chars: float  # in `unit`
    tokens: int
    oversized: int
    top_tool: str | None
    top_chars: float
    unit: str = "chars"


def figures_of(analysis: RetentionAnalysis | None) -> Figures | None:
    """None when the analysis is unavailable for this history (`doctor memory` says why)."""
    if analysis is None:
        return None
    stats = analysis.stats
    tools = analysis.per_tool()
    sent = analysis.sent_totals()
    if sent is not None:
        return Figures(stats.tool_result_count, sent.size, sent.tokens, stats.oversized_result_count,
                       tools[0].tool if tools else None, tools[0].sent if tools else 0, analysis.measure.unit)
    return Figures(stats.tool_result_count, stats.total_chars, stats.total_tokens, stats.oversized_result_count,
                   tools[0].tool if tools else None, tools[0].chars if tools else 0)


def render(found: Figures, window: ContextWindow | None = None) -> str:
    """`doctor: 12,767 chars (~3,192 tok) in 5 tool results · 1 oversized · most: Read 8,054`, and
    `· 1.6% of the 200,000-token context` when the agent stated its window (`window`)."""
    results = f"{figure(found.results)} tool result{'' if found.results == 1 else 's'}"
    line = f"doctor: {figure(found.chars)} {found.unit} (~{figure(found.tokens)} tok) in {results}"
    line += f" · {figure(found.oversized)} oversized"
    if found.top_tool is not None:
        line += f" · most: {inert_line(found.top_tool) or '(unnamed)'} {figure(found.top_chars)}"
    if window is not None:
        line += f" · {percent(window.share(found.tokens))} of the {figure(window.tokens)}-token context"
    return line
