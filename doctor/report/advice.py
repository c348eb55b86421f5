"""What the figures mean and what to do next, shared by every face (text, Markdown, HTML, JSON, TUI).

Each rule reads the report model and returns zero or more `Advice` items with a
stable `topic`, so the TUI can highlight them, JSON consumers can match on them, and
the text formats join them into one interpretation paragraph. No formatting
library is imported here; messages are plain sentences, with names in backticks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from doctor.core.estimator import tokens_for_chars
from doctor.report.figures import figure, plural

WARNING = "warning"
INFO = "info"

# Results larger than this are worth a word when truncation is off (Qwen's default threshold).
LARGE_RESULT_CHARS = 25_000
# One tool holding this share of the retained chars is named as the main cost.
DOMINANT_SHARE = 0.5
# Side-channel copies below this many chars are not worth a sentence.
SIDE_CHANNEL_NOTABLE_CHARS = 10_000


@dataclass(frozen=True)
class Advice:
    topic: str
    severity: str  # WARNING (something to act on) or INFO
    message: str

    def to_json(self) -> dict:
        return {"topic": self.topic, "severity": self.severity, "message": self.message}


def _code(name: str) -> str:
    """A tool name in backticks; a backtick inside it would end the code span, so it becomes a quote."""
    return f"`{(name or '(no name)').replace('`', chr(39))}`"


def _verb(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def _tokens(chars: float) -> str:
    return f"≈{figure(tokens_for_chars(chars))} tokens"


def _kept(report, size: float, tokens: int) -> str:
    """`12,345 chars (≈3,087 tokens)` in the session's terms (an agent's own estimate named)."""
    terms = report.terms
    if not terms.own:
        return f"{figure(size)} chars ({_tokens(size)})"
    return f"{figure(size)} {terms.unit} (≈{figure(tokens)} tokens by {terms.estimate})"


def visible_chars(report) -> float:
    """What the model sees of the tool results, in chars, to set copies (counted in chars) against:
    Qwen's estimator for Qwen's sessions, the text each result sent for the other agents'."""
    if report.retention is None:
        return 0
    return report.retention.raw_total() if report.terms.own else report.retention.stats.total_chars


def _retention_unavailable(report) -> list[Advice]:
    if report.retention is not None:
        return []
    reason = report.retention_unavailable or "Tool result retention diagnostics unavailable"
    qwen = "; Qwen would omit its retention section too" if not report.terms.own else ""
    return [Advice("retention-unavailable", WARNING,
                   f"{reason.rstrip('.')}{qwen}. The other sections still apply.")]


def _oversized(report) -> list[Advice]:
    if report.retention is None:
        return []
    terms = report.terms
    kept: dict[str, list] = {}
    for result in report.retention.oversized():
        sums = kept.setdefault(result.tool, [0, 0])
        sums[0] += terms.size(result)
        sums[1] += terms.tokens(result)
    found = []
    for summary in report.retention.per_tool():
        if not summary.oversized:
            continue
        budget = summary.budget
        origin = f" ({budget.detail})" if budget.detail else ""
        verb, their = ("exceeds", "its") if summary.oversized == 1 else ("exceed", "their")
        limit = "limit"
        if budget.source == "override":  # doctor's own budget (its config or a flag), not the agent's
            their, limit = "doctor's", "budget"
        elif report.rules is not None and not report.rules.agent_budget(summary.tool).own:
            their, limit = "the", f"limit doctor holds {_verb(summary.oversized, 'it', 'them')} to"
        if report.rules is not None:
            unit = {"chars": "char", "bytes": "byte"}.get(report.rules.unit, report.rules.unit)
            found.append(Advice("oversized", WARNING,
                                f"{plural(summary.oversized, 'result')} from {_code(summary.tool)} {verb} {their} "
                                f"{figure(budget.chars)}-{unit} {limit}{origin} and reached the model whole, keeping "
                                f"{_kept(report, *kept[summary.tool])} in context."))
            continue
        found.append(Advice("oversized", WARNING,
                            f"{plural(summary.oversized, 'result')} from {_code(summary.tool)} {verb} 2× {their} "
                            f"{figure(budget.chars)}-char budget{origin}, keeping {_kept(report, *kept[summary.tool])} "
                            "in context on every later turn."))
    if found:
        found.append(Advice("oversized-next-step", WARNING, _next_step(report, [
            summary for summary in report.retention.per_tool() if summary.oversized])))
    return found


def _next_step(report, summaries: list) -> str:
    """What to do about the oversized results of these tools, by whose budgets they exceed: doctor's own
    (stricter than the agent's limits, which let the results through), the limit doctor holds a tool
    the agent never cuts to, or the agent's own limits (raised or disabled)."""
    rules = report.rules
    budgets = [rules.agent_budget(s.tool) if rules is not None else s.budget for s in summaries]
    client = rules.client if rules is not None else report.terms.client
    reasons = []
    doctors = sorted({budget.detail for budget in budgets if budget.source == "override"})
    if doctors:
        reasons.append(f"doctor's own {_verb(len(doctors), 'budget', 'budgets')} ({'; '.join(doctors)}) "
                       f"{_verb(len(doctors), 'is', 'are')} stricter than {client}'s limits, which let those "
                       "results through")
    held = [s.tool for s, budget in zip(summaries, budgets) if budget.source != "override" and not getattr(budget, "own", True)]
    if held:
        reasons.append(f"{client} cuts none of the output of {', '.join(map(_code, held))}: only narrower calls keep "
                       "it small")
    if any(budget.source != "override" and getattr(budget, "own", True) for budget in budgets):
        reasons.append(f"check the limits listed under 'Budgets in force' ({client}'s own): a raised or disabled "
                       "limit let those results through" if rules is not None else
                       "check that truncation was on (tools.truncateToolOutputThreshold > 0) when those results "
                       "were produced; a result above 2× its budget means no truncation layer bounded it")
    if rules is None:
        return f"Next: run /compress to reclaim that space now, and {'; '.join(reasons)}."
    return f"Next: run {report.terms.compact_command} in {client} to reclaim that space; {'; '.join(reasons)}."


def _truncation_disabled(report) -> list[Advice]:
    if report.retention is None or report.rules is not None or report.settings.threshold != float("inf"):
        return []
    large = report.retention.count_raw_above(LARGE_RESULT_CHARS)
    if not large:
        return []
    return [Advice("truncation-disabled", WARNING,
                   f"Truncation is disabled (tools.truncateToolOutputThreshold ≤ 0): {plural(large, 'result')} "
                   f"above {figure(LARGE_RESULT_CHARS)} chars stay whole in the history; set a positive threshold "
                   "(25,000 is Qwen's default) to bound new ones.")]


def _dominant_tool(report) -> list[Advice]:
    if report.retention is None:
        return []
    terms = report.terms
    summaries = report.retention.per_tool()
    total = sum(terms.size(s) for s in summaries)
    if len(summaries) < 2 or total < SIDE_CHANNEL_NOTABLE_CHARS:
        return []
    top = summaries[0]
    share = terms.size(top) / total
    if share < DOMINANT_SHARE:
        return []
    kept = _kept(report, terms.size(top), terms.tokens(top)).replace(" (", ", ", 1).rstrip(")")
    return [Advice("dominant-tool", INFO,
                   f"{_code(top.tool)} accounts for {share:.0%} of retained tool output "
                   f"({kept}, over {plural(top.count, 'result')}).")]


def _ui_history(report) -> list[Advice]:
    stats = report.qwen_stats
    if stats is None or stats.large_outputs_in_ui_history == 0:
        return []
    count = stats.large_outputs_in_ui_history
    if not report.terms.own:
        return [Advice("ui-history", WARNING,
                       f"{plural(count, 'oversized output')} also rendered in the UI history "
                       f"{_verb(count, 'is', 'are')} held a second time in memory, outside the model's context.")]
    # Another agent's display copy is measured against twice the tool's limit, whatever the model got of it:
    # a result the agent cut for the model keeps its whole output as the display.
    oversized = {result.call_id for result in report.retention.oversized() if result.call_id is not None}
    whole = sum(1 for tool in report.retention.ui.tools if tool.large and tool.call_id in oversized) \
        if report.retention.ui is not None else 0
    model = (f"the model got {_verb(count, 'it', 'them')} cut" if not whole else
             f"{plural(whole, 'of them', 'of them')} reached the model whole too" if whole < count else
             f"the model got {_verb(count, 'it', 'them')} whole too")
    return [Advice("ui-history", WARNING,
                   f"{plural(count, 'tool output')} over twice {_verb(count, 'its', 'their')} limit "
                   f"{_verb(count, 'is', 'are')} kept whole as a display (resultDisplay) by {report.terms.client} "
                   f"and held in memory outside the model's context ({model}).")]


def _side_channel(report) -> list[Advice]:
    copies = [copy for copy in report.side_channel if copy.chars]
    side = sum(copy.chars for copy in copies)
    if side < SIDE_CHANNEL_NOTABLE_CHARS:
        return []
    kinds = ", ".join(copy.kind for copy in copies)
    visible = visible_chars(report)
    compared = f", {side / visible:.1f}× the {figure(visible)} chars the model sees" if visible else ""
    return [Advice("side-channel", INFO,
                   f"The session file also keeps {figure(side)} chars of tool output outside the model's context "
                   f"({kinds}){compared}; they cost disk and reader memory, not tokens.")]


def _spill(report) -> list[Advice]:
    if report.spill is None:
        return []
    # Here, not above: only a report with a spill audit needs it, and the audit pulls in thread pools and digests
    # (`doctor whatif` and the status line build reports without one).
    from doctor.report.audit_summary import category_counts, problem_kinds
    from doctor.spill import audit

    counts = category_counts(report.spill)
    kinds = problem_kinds(report.spill)
    found = []
    if counts["missing"]:
        found.append(Advice("spill-missing", WARNING,
                            f"{plural(counts['missing'], 'spill file')} the session points to cannot be read "
                            "(missing, never written or unreadable): the model saw only the stub; if the session "
                            "was copied from another machine, pass --spill-root DIR."))
    if counts["integrity"]:
        found.append(Advice("spill-integrity", WARNING,
                            f"{plural(counts['integrity'], 'spill file')} no longer "
                            f"{_verb(counts['integrity'], 'matches', 'match')} what the session declared "
                            "(sha256, size or preview): changed after being written, not the original output."))
    if kinds.get(audit.PERMISSIONS):
        found.append(Advice("spill-permissions", WARNING,
                            f"{plural(kinds[audit.PERMISSIONS], 'spill file')} can be read by other users: "
                            "chmod 600 them (Qwen writes 0600)."))
    if kinds.get(audit.OUTSIDE_ROOT):
        found.append(Advice("spill-outside-root", WARNING,
                            f"{plural(kinds[audit.OUTSIDE_ROOT], 'pointer')} "
                            f"{_verb(kinds[audit.OUTSIDE_ROOT], 'resolves', 'resolve')} outside the agent's spill "
                            "directories (not opened): check where they lead before using --allow-outside."))
    if counts["budget"]:
        found.append(Advice("spill-budget", WARNING,
                            "Spill files exceed Qwen's limits (50 MiB per file, 500 MiB per session): "
                            "remove spill directories of old sessions."))
    return found


def _input(report) -> list[Advice]:
    skipped = [issue for issue in report.issues if issue.severity == "warning"]
    if not skipped:
        return []
    return [Advice("input", WARNING,
                   f"{plural(len(skipped), 'part')} of the input could not be read and "
                   f"{_verb(len(skipped), 'was', 'were')} skipped "
                   "(see Input problems): the figures cover the rest.")]


def _process(report) -> list[Advice]:
    process = report.process
    if process is None or not process.analysis.risks:
        return []
    kinds = ", ".join(risk.type for risk in process.analysis.risks)
    return [Advice("process", WARNING, f"Process memory: {kinds}. {process.analysis.recommendation}")]


RULES: tuple[Callable[..., list[Advice]], ...] = (
    _retention_unavailable, _oversized, _truncation_disabled, _dominant_tool, _ui_history,
    _side_channel, _spill, _input, _process,
)


def _all_clear(report) -> Advice:
    stats = report.qwen_stats
    largest = ""
    if stats is not None and stats.tool_result_count:
        top = report.retention.largest(1)[0]
        size, tokens = (report.terms.size(top), report.terms.tokens(top)) if report.terms.own else \
            (stats.largest_result_chars, 0)
        largest = f" The largest result holds {_kept(report, size, tokens)}."
    audited = "" if report.spill is None else " and the spill audit found no problem"
    return Advice("clean", INFO, f"Nothing to act on: no result exceeds its {report.terms.limit_word}{audited}.{largest}")


def advise(report) -> list[Advice]:
    """Every rule's findings, warnings first as the rules order them; an all-clear when none warns."""
    items = [item for rule in RULES for item in rule(report)]
    if not any(item.severity == WARNING for item in items):
        items.insert(0, _all_clear(report))
    return items


def interpretation(items: list[Advice]) -> str:
    """The one-paragraph reading of the report."""
    return " ".join(item.message for item in items)
