"""One retention analysis: Qwen's seven fields plus doctor's breakdowns.

`analyze_tool_result_retention` is the entry point every face of doctor uses
(CLI, reports, TUI, live attach). `RetentionTracker` keeps the per-Content
work of a live history so a refresh after appends costs only the new tail.
Breakdowns are computed from the result table's columns; `ResultMeasure` rows
are made only for the results a caller actually looks at.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

from msgspec import Struct

from doctor.core.agent_measure import CHARS, AgentMeasure
from doctor.core.budgets import Budget, BudgetRegistry
from doctor.core.estimator import DEFAULT_IMAGE_TOKEN_ESTIMATE, tokens_for_chars
from doctor.core.result_table import ResultColumns, ResultTable
from doctor.core.retention import (
    ResultMeasure,
    RetentionStats,
    RetentionTotals,
    whole_number,
)
from doctor.core.sentinels import LAYERS
from doctor.core.ui_history import UiScan, scan_ui_history


class ToolSummary(Struct, frozen=True):
    """Per-tool row: what Qwen's totals hide. `sent`, `sent_tokens`, `sent_largest`: the same results
    in the agent's own measure (None when the session has none: Qwen's figures are its own)."""

    tool: str
    count: int
    chars: float
    largest: float
    oversized: int
    errors: int
    budget: Budget
    by_layer: tuple[tuple[str, int], ...]
    sent: float | None = None
    sent_tokens: int | None = None
    sent_largest: float | None = None

    @property
    def tokens(self) -> int:
        return tokens_for_chars(self.chars)


class SentTotals(Struct, frozen=True):
    """A session's results in its agent's own measure: size in the measure's unit, tokens by its estimate."""

    size: float
    tokens: int
    largest: float


class ResultRows(Sequence):
    """The first `length` rows of a result table, each made when it is read."""

    def __init__(self, table: ResultTable, length: int):
        self._table = table
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._table.row(i) for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("result index out of range")
        return self._table.row(index)

    def __iter__(self) -> Iterator[ResultMeasure]:
        row = self._table.row
        return (row(i) for i in range(self._length))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (ResultRows, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # rows compare by content, like a list


class RetentionAnalysis(Struct, frozen=True):
    """Everything the reports show about retention, for the first `length` results of `table`."""

    stats: RetentionStats
    table: ResultTable
    length: int
    ui: UiScan | None
    budgets: BudgetRegistry
    image_token_estimate: float

    @property
    def results(self) -> ResultRows:
        return ResultRows(self.table, self.length)

    @property
    def measure(self) -> AgentMeasure | None:
        """The agent's own measure the table took beside Qwen's figures (None for Qwen's sessions)."""
        return self.table.measure

    def sent_totals(self) -> SentTotals | None:
        """What the model received in the agent's own measure, summed; None without a measure."""
        if self.table.measure is None:
            return None
        if self.length == len(self.table):
            table = self.table
            return SentTotals(whole_number(table.sent_total), table.sent_tokens_total, whole_number(table.sent_largest))
        sizes = list(self._columns("sent"))
        return SentTotals(whole_number(sum(sizes)), sum(self._columns("sent_tokens")),
                          whole_number(max(sizes, default=0)))

    def result_columns(self) -> ResultColumns:
        """`results` column by column (`ResultTable.columns`)."""
        return self.table.columns(self.length)

    def _columns(self, name: str) -> Iterable:
        """A column of the table up to this analysis's length (the tracker may have extended it)."""
        return islice(getattr(self.table, name), self.length)

    def per_tool(self) -> list[ToolSummary]:
        """Tools by retained size (the agent's own measure, when the table took one), largest first."""
        table = self.table
        slots: dict[int, list] = {}
        for slot, chars, flags in zip(self._columns("tool"), self._columns("chars"), self._columns("flags")):
            group = slots.get(slot)
            if group is None:
                group = slots[slot] = [0, 0.0, 0.0, 0, 0, [0] * len(LAYERS)]
            group[0] += 1
            group[1] += chars
            if chars > group[2]:
                group[2] = chars
            group[3] += flags & 1
            group[4] += (flags >> 1) & 1
            group[5][flags >> 2] += 1
        sent: dict[int, list] = {}
        if table.measure is not None:
            for slot, size, tokens in zip(self._columns("tool"), self._columns("sent"), self._columns("sent_tokens")):
                group = sent.setdefault(slot, [0.0, 0, 0.0])
                group[0] += size
                group[1] += tokens
                if size > group[2]:
                    group[2] = size
        summaries = [
            ToolSummary(
                tool=table.tools[slot],
                count=count,
                chars=whole_number(chars),
                largest=whole_number(largest),
                oversized=oversized,
                errors=errors,
                budget=table.budgets[slot],
                by_layer=tuple((layer, n) for layer, n in zip(LAYERS, layers) if n),
                **({} if slot not in sent else {"sent": whole_number(sent[slot][0]), "sent_tokens": sent[slot][1],
                                                "sent_largest": whole_number(sent[slot][2])}),
            )
            for slot, (count, chars, largest, oversized, errors, layers) in slots.items()
        ]
        summaries.sort(key=lambda s: (-(s.sent if s.sent is not None else s.chars), s.tool))
        return summaries

    def largest(self, count: int) -> list[ResultMeasure]:
        """The `count` largest results: in the agent's own measure when the table took one."""
        chars = self.table.sent if self.table.measure is not None else self.table.chars
        ordinals = heapq.nsmallest(count, range(self.length), key=lambda i: (-chars[i], i))
        return [self.table.row(i) for i in ordinals]

    def oversized(self) -> list[ResultMeasure]:
        return [self.table.row(i) for i, flags in enumerate(self._columns("flags")) if flags & 1]

    def raw_total(self) -> int:
        """The JS length of every result's output-or-error string: the text the model was sent, in chars."""
        return sum(self._columns("raw_chars"))

    def count_raw_above(self, chars: int) -> int:
        """How many results keep more than `chars` of raw output."""
        return sum(1 for raw in self._columns("raw_chars") if raw > chars)

    def calls(self) -> dict[str, tuple[int, str]]:
        """call id -> (ordinal, tool) of the first result answering it."""
        table = self.table
        found: dict[str, tuple[int, str]] = {}
        for ordinal, (call_id, slot) in enumerate(zip(self._columns("call_ids"), self._columns("tool"))):
            if call_id and call_id not in found:
                found[call_id] = (ordinal, table.tools[slot])
        return found

    def with_stubs(self) -> list[ResultMeasure]:
        """Rows whose text is a sentinel header with a parsable pointer (spilled output)."""
        rows = (self.table.row(i) for i in sorted(self.table.stubs) if i < self.length)
        return [row for row in rows if row.stub is not None]

    def chars_by_turn(self, column: str = "chars") -> list[tuple[int, float]]:
        """Retained chars added per turn (the person's n-th prompt, `doctor.core.turns`), for the
        "where it grew" chart; `column="sent"`: in the agent's own measure."""
        per_turn: dict[int, float] = {}
        for turn, chars in zip(self._columns("turn"), self._columns(column)):
            per_turn[turn] = per_turn.get(turn, 0) + chars
        return sorted((turn, whole_number(chars)) for turn, chars in per_turn.items())

    @property
    def layer_counts(self) -> dict[str, int]:
        counts = [0] * len(LAYERS)
        for flags in self._columns("flags"):
            counts[flags >> 2] += 1
        return {layer: n for layer, n in zip(LAYERS, counts) if n}


def _stats(totals: RetentionTotals, threshold: float, ui: UiScan | None) -> RetentionStats:
    return RetentionStats(
        tool_result_count=totals.tool_result_count,
        total_chars=whole_number(totals.total_chars),
        largest_result_chars=whole_number(totals.largest_result_chars),
        oversized_result_count=totals.oversized_result_count,
        oversized_threshold_chars=threshold if threshold != float("inf") else 0,
        large_outputs_in_ui_history=ui.large_outputs if ui is not None else 0,
        present_in_compression_input=totals.oversized_result_count > 0,
    )


def new_table(budgets: BudgetRegistry, image_token_estimate: float, contents: Sequence | None, *,
              turns_marked: bool = False, measure: AgentMeasure | None = None) -> ResultTable:
    """An empty table measuring with `budgets` (an agent's rules answer the same questions);
    `turns_marked`: the history's reader marked its typed prompts (`doctor.core.turns`); `measure`:
    the agent's own measure, taken beside Qwen's figures; budgets in its unit judge by it."""
    judge_sent = measure is not None and getattr(budgets, "unit", CHARS) == measure.unit
    return ResultTable(budgets.result_budget, budgets.threshold, image_token_estimate, contents,
                       budgets.exempt_prefixes, turns_marked, measure, judge_sent)


def analysis_of_table(table: ResultTable, ui_history: Iterable | None, budgets: BudgetRegistry,
                      image_token_estimate: float) -> RetentionAnalysis:
    """The analysis of the results `table` measured (with `budgets`), and of `ui_history`."""
    ui = scan_ui_history(ui_history, budgets) if ui_history is not None else None
    return RetentionAnalysis(
        stats=_stats(table.totals, budgets.threshold.chars, ui),
        table=table,
        length=len(table),
        ui=ui,
        budgets=budgets,
        image_token_estimate=image_token_estimate,
    )


def analyze_tool_result_retention(
    history: Iterable,
    *,
    ui_history: Iterable | None = None,
    budgets: BudgetRegistry | None = None,
    image_token_estimate: float = DEFAULT_IMAGE_TOKEN_ESTIMATE,
    turns_marked: bool = False,
    measure: AgentMeasure | None = None,
) -> RetentionAnalysis:
    """Qwen's `toolResultRetention` for `history` (and `ui_history`), with per-result rows.

    `turns_marked`: the reader marked where each typed prompt starts (`doctor.core.turns`);
    `measure`: the agent's own measure, taken of each result beside Qwen's figures. One pass. A list (a live host's history) is read by reference, up to the
    length it had when the analysis started (a host thread may append meanwhile);
    any other iterable (a reader streaming a recording) is consumed once, so no
    Content outlives its own measurement. Raises RetentionUnavailable where
    Qwen's analyzer would throw.
    """
    budgets = budgets or BudgetRegistry()
    contents = history if isinstance(history, Sequence) else None
    if contents is not None:
        history = islice(history, len(history))
    table = new_table(budgets, image_token_estimate, contents, turns_marked=turns_marked, measure=measure)
    table.extend(history)
    return analysis_of_table(table, ui_history, budgets, image_token_estimate)
