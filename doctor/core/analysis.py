"""One retention analysis: Qwen's seven fields plus doctor's breakdowns.

`analyze_tool_result_retention` is the entry point every face of doctor uses
(CLI, reports, TUI, live attach). `RetentionTracker` keeps the per-Content
work of a live history so a refresh after appends costs only the new tail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import is_

from doctor.core.budgets import Budget, BudgetRegistry
from doctor.core.estimator import DEFAULT_IMAGE_TOKEN_ESTIMATE, tokens_for_chars
from doctor.core.retention import (
    ResultMeasure,
    RetentionStats,
    RetentionTotals,
    measure_tool_results,
    qwen_retention_totals,
    totals_of,
)
from doctor.core.sentinels import LAYERS
from doctor.core.ui_history import UiScan, scan_ui_history


@dataclass(frozen=True, slots=True)
class ToolSummary:
    """Per-tool row: what Qwen's totals hide."""

    tool: str
    count: int
    chars: float
    largest: float
    oversized: int
    errors: int
    budget: Budget
    by_layer: tuple[tuple[str, int], ...]

    @property
    def tokens(self) -> int:
        return tokens_for_chars(self.chars)


@dataclass(frozen=True)
class RetentionAnalysis:
    """Everything the reports show about retention, computed once."""

    stats: RetentionStats
    results: tuple[ResultMeasure, ...]
    ui: UiScan | None
    budgets: BudgetRegistry
    image_token_estimate: float

    def per_tool(self) -> list[ToolSummary]:
        """Tools by retained chars, largest first."""
        groups: dict[str, list[ResultMeasure]] = {}
        for result in self.results:
            groups.setdefault(result.tool, []).append(result)
        summaries = [self._summarise(tool, rows) for tool, rows in groups.items()]
        summaries.sort(key=lambda s: (-s.chars, s.tool))
        return summaries

    def _summarise(self, tool: str, rows: list[ResultMeasure]) -> ToolSummary:
        layers = Counter(row.sentinel for row in rows)
        return ToolSummary(
            tool=tool,
            count=len(rows),
            chars=sum(row.chars for row in rows),
            largest=max(row.chars for row in rows),
            oversized=sum(row.oversized for row in rows),
            errors=sum(row.is_error for row in rows),
            budget=rows[0].budget,
            by_layer=tuple((layer, layers[layer]) for layer in LAYERS if layers[layer]),
        )

    def largest(self, count: int) -> list[ResultMeasure]:
        return sorted(self.results, key=lambda r: (-r.chars, r.ordinal))[:count]

    def chars_by_turn(self) -> list[tuple[int, float]]:
        """Retained chars added per user turn, for the "where it grew" chart."""
        per_turn: dict[int, float] = {}
        for result in self.results:
            per_turn[result.turn] = per_turn.get(result.turn, 0) + result.chars
        return sorted(per_turn.items())

    @property
    def layer_counts(self) -> dict[str, int]:
        counts = Counter(result.sentinel for result in self.results)
        return {layer: counts[layer] for layer in LAYERS if counts[layer]}


def _stats(totals: RetentionTotals, threshold: float, ui: UiScan | None) -> RetentionStats:
    return RetentionStats(
        tool_result_count=totals.tool_result_count,
        total_chars=totals.total_chars,
        largest_result_chars=totals.largest_result_chars,
        oversized_result_count=totals.oversized_result_count,
        oversized_threshold_chars=threshold if threshold != float("inf") else 0,
        large_outputs_in_ui_history=ui.large_outputs if ui is not None else 0,
        present_in_compression_input=totals.oversized_result_count > 0,
    )


def _qwen_totals(history: Iterable, budgets: BudgetRegistry, estimate: float) -> RetentionTotals:
    def resolve(name: str) -> float | None:
        budget = budgets.registered_budget(name)
        return None if budget is None else budget.chars

    return qwen_retention_totals(
        history,
        threshold_chars=budgets.limits.threshold,
        resolve_tool_budget=resolve,
        image_token_estimate=estimate,
    )


def analyze_tool_result_retention(
    history: Iterable,
    *,
    ui_history: Iterable | None = None,
    budgets: BudgetRegistry | None = None,
    image_token_estimate: float = DEFAULT_IMAGE_TOKEN_ESTIMATE,
) -> RetentionAnalysis:
    """Qwen's `toolResultRetention` for `history` (and `ui_history`), with per-result rows.

    A list (a live host's history) is read by reference: a fixed prefix, since a
    host thread may append meanwhile, through the fast port of Qwen's loop. Any
    other iterable (a reader streaming a recording) is consumed once and its
    totals summed from the rows, so no Content outlives its own measurement.
    Raises RetentionUnavailable where Qwen's analyzer would throw.
    """
    budgets = budgets or BudgetRegistry()
    if isinstance(history, Sequence):
        prefix = list(islice(history, len(history)))  # references only, not payloads
        results = tuple(measure_tool_results(prefix, budgets, image_token_estimate=image_token_estimate))
        totals = _qwen_totals(prefix, budgets, image_token_estimate)
    else:
        results = tuple(measure_tool_results(history, budgets, image_token_estimate=image_token_estimate))
        totals = totals_of(results)
    ui = scan_ui_history(ui_history, budgets) if ui_history is not None else None
    return RetentionAnalysis(
        stats=_stats(totals, budgets.limits.threshold, ui),
        results=results,
        ui=ui,
        budgets=budgets,
        image_token_estimate=image_token_estimate,
    )


@dataclass
class RetentionTracker:
    """Incremental analysis of a live history that the host appends to.

    It remembers the Contents it has seen (references, not copies) and the
    counters and rows they produced. On refresh, when every remembered Content
    is still at its position (checked by identity), only the appended tail is
    analysed. A replaced, removed or reordered Content, or a shorter history,
    triggers a full analysis.

    It cannot see a Content edited in place (a part appended to the same list,
    an output string swapped in the same dict, as microcompaction does): hosts
    that do that call `invalidate()`.
    """

    budgets: BudgetRegistry = field(default_factory=BudgetRegistry)
    image_token_estimate: float = DEFAULT_IMAGE_TOKEN_ESTIMATE
    _seen: list = field(default_factory=list, repr=False)
    _totals: RetentionTotals = field(default_factory=RetentionTotals, repr=False)
    _results: list[ResultMeasure] = field(default_factory=list, repr=False)
    full_scans: int = 0
    incremental_scans: int = 0

    def invalidate(self) -> None:
        self._seen = []
        self._totals = RetentionTotals()
        self._results = []

    def _prefix_unchanged(self, history: Sequence) -> bool:
        seen = len(self._seen)
        return len(history) >= seen and all(map(is_, islice(history, seen), self._seen))

    def totals(self, history: Sequence) -> RetentionTotals:
        """Qwen's counters for `history`, reusing the remembered prefix when it is intact."""
        length = len(history)  # appends made while we read belong to the next refresh
        if self._seen and self._prefix_unchanged(history):
            start = len(self._seen)
            self.incremental_scans += 1
        else:
            self.invalidate()
            start = 0
            self.full_scans += 1
        tail = list(islice(history, start, length))
        self._totals = self._totals + _qwen_totals(tail, self.budgets, self.image_token_estimate)
        self._results.extend(
            measure_tool_results(
                tail,
                self.budgets,
                image_token_estimate=self.image_token_estimate,
                first_index=start,
                first_ordinal=len(self._results),
                first_turn=self._results[-1].turn if self._results else 0,
            )
        )
        self._seen.extend(tail)
        return self._totals

    def analyze(self, history: Sequence, ui_history: Iterable | None = None) -> RetentionAnalysis:
        totals = self.totals(history)
        ui = scan_ui_history(ui_history, self.budgets) if ui_history is not None else None
        return RetentionAnalysis(
            stats=_stats(totals, self.budgets.limits.threshold, ui),
            results=tuple(self._results),
            ui=ui,
            budgets=self.budgets,
            image_token_estimate=self.image_token_estimate,
        )
