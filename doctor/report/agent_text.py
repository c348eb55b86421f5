"""The retention block of a Claude Code, Gemini CLI or Codex session, in that agent's own words.

A Qwen Code session opens its report with Qwen's own lines (`qwen_text`, word for word, for
parity). Another agent's session opens with the same figures in its own measure and terms: what
the model holds, the size that agent applies its limits to, tokens by its own estimate and their
share of the model's context window where the agent states it, its limits, the UI copy where the agent has one (Gemini's `resultDisplay`), and its own command to
compact. Qwen's estimator comes last, labelled, for comparing agents.
"""

from __future__ import annotations

from doctor.report.figures import figure, plural
from doctor.report.terms import QWEN_CLIENT
from doctor.report.window import share_sentence


def agent_retention_lines(report) -> list[str]:
    """The block's lines (title first), for a report whose session has a measure of its own."""
    terms = report.terms
    analysis = report.retention
    stats = analysis.stats
    size, tokens, largest = terms.totals(analysis)
    client, unit = terms.client, terms.unit
    judged = f"over {client}'s own limits" if terms.judged_by_agent else "over Qwen Code's budgets (--budgets qwen)"
    lines = [
        f"Tool results in {client}'s context",
        f"  Tool results the model holds: {figure(stats.tool_result_count)}",
        f"  Sent to the model: {figure(size)} {unit} (≈{figure(tokens)} tokens, {terms.estimate}: {terms.estimate_rule})",
        f"  Largest result: {figure(largest)} {unit}",
        f"  Oversized ({judged}, reached the model whole): {figure(stats.oversized_result_count)}",
    ]
    if report.context_window is not None:
        lines.append(f"  {share_sentence(report.context_window, tokens)}")
    if analysis.ui is not None:
        lines.append(f"  Oversized also kept as a display in {client}'s memory (resultDisplay): "
                     f"{plural(stats.large_outputs_in_ui_history, 'item')}")
    lines.append(f"  {QWEN_CLIENT}'s estimator, for comparing agents: {figure(stats.total_chars)} chars "
                 f"(output + nested parts + 64 a result)")
    if stats.oversized_result_count > 0:
        lines.append(f"  Hint: oversized tool results stay in context and cost tokens on every later turn; "
                     f"{terms.compact_command} in {client} can reclaim space.")
    return lines
