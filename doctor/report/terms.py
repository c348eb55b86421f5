"""The words and figures every face of a report uses for its session's agent.

A Qwen Code session (and a message dump or a live host, judged by Qwen's rules) is reported in
Qwen's terms: its estimator's chars (what Qwen's `/doctor memory` sums), tokens as chars ÷ 4,
"budget", `/compress`. A Claude Code, Gemini CLI or Codex session is reported in its own: what
the model received in that agent's measure (`doctor.core.agent_measure`: chars, or bytes for
Codex), tokens by that agent's own estimate, "limit", that agent's command to compact
(`/compact`, `/compress`). Qwen's estimator stays beside it, labelled, for comparing agents.
Renderers ask `terms_of(report)` for a result's or a tool's figures instead of reading
`chars` / `tokens` themselves, so no face mixes the two measures.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.core.agent_measure import AgentMeasure, measure_for
from doctor.report.figures import figure

QWEN_CLIENT = "Qwen Code"
QWEN_ESTIMATE = "chars ÷ 4"
QWEN_COMPACT = "/compress"


@dataclass(frozen=True)
class Terms:
    """How one report names and counts what its session's model received."""

    measure: AgentMeasure | None  # None: Qwen's own figures are the session's
    judged_by_agent: bool = True  # False: --budgets qwen, Qwen's budgets judge an agent's results

    @property
    def own(self) -> bool:
        """The session has a measure of its own (Claude Code, Gemini CLI, Codex)."""
        return self.measure is not None

    @property
    def client(self) -> str:
        return self.measure.client if self.measure is not None else QWEN_CLIENT

    @property
    def unit(self) -> str:
        return self.measure.unit if self.measure is not None else "chars"

    @property
    def estimate(self) -> str:
        """The token estimate's name: `Claude Code's estimate`, or Qwen's `chars ÷ 4`."""
        return self.measure.estimate if self.measure is not None else QWEN_ESTIMATE

    @property
    def estimate_rule(self) -> str:
        return self.measure.estimate_rule if self.measure is not None else QWEN_ESTIMATE

    @property
    def compact_command(self) -> str:
        return self.measure.compact_command if self.measure is not None else QWEN_COMPACT

    @property
    def limit_word(self) -> str:
        """What the agent calls the number a result is held to."""
        return "limit" if self.measure is not None and self.judged_by_agent else "budget"

    def size(self, row) -> float:
        """A result's (or a tool's, summed) size as the session's agent measures it."""
        return row.sent if self.measure is not None and row.sent is not None else row.chars

    def tokens(self, row) -> int:
        """Its tokens by the agent's own estimate."""
        return row.sent_tokens if self.measure is not None and row.sent_tokens is not None else row.tokens

    def largest(self, summary) -> float:
        return summary.sent_largest if self.measure is not None and summary.sent_largest is not None else summary.largest

    def sized(self, row) -> str:
        """`12,345 chars (≈3,087 tokens)`, the tokens by the agent's estimate."""
        return f"{figure(self.size(row))} {self.unit} (≈{figure(self.tokens(row))} tokens)"

    def totals(self, analysis) -> tuple[float, int, float]:
        """(size, tokens, largest) of every result of `analysis`, in the session's terms."""
        sent = analysis.sent_totals() if self.measure is not None else None
        if sent is not None:
            return sent.size, sent.tokens, sent.largest
        stats = analysis.stats
        return stats.total_chars, stats.total_tokens, stats.largest_result_chars


def terms_of(report) -> Terms:
    """The terms of `report`'s session: its agent's, or Qwen's."""
    return Terms(measure_for(report.source.agent), judged_by_agent=report.rules is not None)
