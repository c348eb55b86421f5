"""Tool-result retention: the figures Qwen Code 0.24.4's `/doctor memory` reports, and doctor's rows.

The types live here; `doctor.core.result_table` fills them in one pass over a
history (a port of `analyzeToolResultRetention`, chunk-CK5HUN74.js).
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec import Struct

from doctor.core.budgets import Budget
from doctor.core.estimator import tokens_for_chars
from doctor.core.sentinels import StubInfo


class RetentionUnavailable(Exception):
    """The history has a shape on which Qwen's analyzer throws.

    Qwen then logs a warning and omits the retention section; doctor does the
    same and says why.
    """


class RetentionTotals(Struct, frozen=True):
    """The four counters of `analyzeToolResultRetention`, summable over slices of a history."""

    tool_result_count: int = 0
    total_chars: float = 0
    largest_result_chars: float = 0
    oversized_result_count: int = 0

    def __add__(self, other: "RetentionTotals") -> "RetentionTotals":
        return RetentionTotals(
            self.tool_result_count + other.tool_result_count,
            self.total_chars + other.total_chars,
            max(self.largest_result_chars, other.largest_result_chars),
            self.oversized_result_count + other.oversized_result_count,
        )


class RetentionStats(Struct, frozen=True):
    """Qwen's `toolResultRetention` object, field for field."""

    tool_result_count: int
    total_chars: float
    largest_result_chars: float
    oversized_result_count: int
    oversized_threshold_chars: float
    large_outputs_in_ui_history: int
    present_in_compression_input: bool

    def to_qwen_json(self) -> dict:
        """The object `/doctor memory --json` prints, keys in Qwen's order."""
        return {
            "toolResultCount": self.tool_result_count,
            "totalChars": whole_number(self.total_chars),
            "largestResultChars": whole_number(self.largest_result_chars),
            "oversizedResultCount": self.oversized_result_count,
            "oversizedThresholdChars": whole_number(self.oversized_threshold_chars),
            "largeOutputsInUIHistory": self.large_outputs_in_ui_history,
            "presentInCompressionInput": self.present_in_compression_input,
        }

    @property
    def total_tokens(self) -> int:
        return tokens_for_chars(self.total_chars)


def whole_number(value: float) -> float | int:
    """An int when the figure is whole (JS prints 6400, not 6400.0), else the float."""
    return int(value) if float(value).is_integer() else value


class ResultMeasure(Struct, frozen=True):
    """One tool result as the model holds it, measured; it keeps no payload.

    chars: the estimator's figure (what Qwen sums); raw_chars: the output-or-error
    string alone (what the oversized rule compares); stub: the parsed sentinel header,
    for results some layer bounded. sent / sent_tokens: the same result in its agent's
    own measure (`doctor.core.agent_measure`; None for Qwen and sources judged by Qwen's
    rules); judged_by_sent: the oversized rule compared `sent` (the budgets are in that unit).
    """

    ordinal: int
    content_index: int
    part_index: int
    turn: int
    call_id: str | None
    tool: str
    chars: float
    raw_chars: int
    is_error: bool
    budget: Budget
    oversized: bool
    sentinel: str
    stub: StubInfo | None
    sent: float | None = None
    sent_tokens: int | None = None
    judged_by_sent: bool = False

    @property
    def tokens(self) -> int:
        return tokens_for_chars(self.chars)

    @property
    def judged_size(self) -> float:
        """The size the oversized rule compared with the budget."""
        return self.sent if self.judged_by_sent else self.raw_chars

    @property
    def budget_ratio(self) -> float | None:
        """The judged size / budget: above 2 (plus 500 chars of slack) is oversized by Qwen's rule,
        above 1 (plus the agent's allowance) by another agent's."""
        if not self.budget.finite or self.budget.chars <= 0:
            return None
        return self.judged_size / self.budget.chars


def totals_of(measures: Iterable[ResultMeasure]) -> RetentionTotals:
    """The same counters summed from measures (a consistency check on the fast loop)."""
    count = oversized = 0
    total = largest = 0
    for measure in measures:
        count += 1
        total += measure.chars
        largest = max(largest, measure.chars)
        oversized += measure.oversized
    return RetentionTotals(count, total, largest, oversized)
