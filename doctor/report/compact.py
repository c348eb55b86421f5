"""The report in a few hundred tokens: what `/doctor:memory` hands an agent's model.

Whatever a slash command prints joins the model's context, so the agent-facing answer is short:
the retention figures on one line (Qwen's for a Qwen session; for another agent's, what its model
received in that agent's own measure and words, `doctor.report.terms`, Qwen's estimator beside), the few largest results (tool, size, budget ratio, where
their output was spilled), and the advice, warnings first, and it names the file holding the
full report. Same paste-safe rules as every other face: sizes, counts, names and presented
paths, never payload text; every name passes through `inert_line`.
"""

from __future__ import annotations

from doctor.report.advice import WARNING, advise
from doctor.report.figures import figure, plural, ratio_text
from doctor.report.inert import inert_line
from doctor.report.model import MemoryReport
from doctor.report.paths import present_path
from doctor.report.window import share_sentence

TOP = 3
ADVICE = 3


def retention_line(report: MemoryReport) -> str:
    """Qwen's figures for a Qwen session; the agent's own measure, then Qwen's estimator, for another agent's."""
    stats = report.qwen_stats
    if stats is None:
        return inert_line(report.retention_unavailable or "Tool result retention unavailable")
    terms = report.terms
    if not terms.own:
        return (f"Tool result retention (Qwen Code's figures): {plural(stats.tool_result_count, 'result')}, "
                f"{figure(stats.total_chars)} chars retained (≈{figure(stats.total_tokens)} tokens), "
                f"largest {figure(stats.largest_result_chars)}, {stats.oversized_result_count} oversized")
    size, tokens, largest = terms.totals(report.retention)
    judged = f"over {terms.client}'s limits" if terms.judged_by_agent else "over Qwen Code's budgets"
    return (f"Tool results in {terms.client}'s context: {plural(stats.tool_result_count, 'result')}, "
            f"{figure(size)} {terms.unit} sent (≈{figure(tokens)} tokens by {terms.estimate}), "
            f"largest {figure(largest)}, {stats.oversized_result_count} {judged} "
            f"(Qwen Code's estimator: {figure(stats.total_chars)} chars)")


def render_compact(report: MemoryReport, full_report: str | None, top: int = TOP) -> str:
    source = report.source
    who = f"{inert_line(source.agent)} session {inert_line(source.session_id or '?')}"
    lines = [f"doctor memory — {who}", retention_line(report)]
    if report.context_window is not None and report.retention is not None:
        lines.append(share_sentence(report.context_window, report.terms.totals(report.retention)[1]))
    if report.retention is not None and report.retention.length:
        lines.append("Largest results:")
        terms = report.terms
        for rank, result in enumerate(report.retention.largest(top), 1):
            ratio = "" if result.budget_ratio is None else f", {ratio_text(result.budget_ratio)}× {terms.limit_word}"
            flag = ", OVERSIZED" if result.oversized else ""
            spill = result.stub.paths[0] if result.stub is not None and result.stub.paths else None
            where = f", spilled to {inert_line(present_path(spill, report.path_style))}" if spill else ""
            lines.append(f"  {rank}. {inert_line(result.tool)}: {figure(terms.size(result))} {terms.unit} "
                         f"(≈{figure(terms.tokens(result))} tokens{ratio}{flag}), turn {result.turn}{where}")
    advice = sorted(advise(report), key=lambda item: item.severity != WARNING)[:ADVICE]
    if advice:
        lines.append("Advice:")
        lines += [f"  - {inert_line(item.message)}" for item in advice]
    if full_report:
        lines.append(f"Full report (mode 0600): {full_report}")
    return "\n".join(lines) + "\n"
