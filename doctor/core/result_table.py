"""One pass over a history: Qwen's counters and a compact column per result field.

A live host's history can hold 100,000 tool results. Building one Python object
per result costs ~30 µs and ~270 bytes each, more than Qwen's whole V8 rescan, so
the pass stores each result's figures in typed arrays (~40 bytes a result) and
`ResultMeasure` rows are made only when a screen or report asks for one. The loop
is a direct port of `analyzeToolResultRetention` (chunk-CK5HUN74.js) with a fast
path for plain dicts; other shapes go through the generic accessors.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from doctor.core.agent_measure import AgentMeasure
from doctor.core.budgets import (
    COMBINED_PASS_TOLERANCE_FACTOR,
    TRUNCATION_FALLBACK_ENVELOPE_SLACK,
    Budget,
)
from doctor.core.estimator import (
    DEFAULT_IMAGE_TOKEN_ESTIMATE,
    FUNCTION_RESPONSE_WRAPPER_CHARS,
    estimate_part_chars,
    function_response_chars,
)
from doctor.core.jsvalues import js_len, js_truthy
from doctor.core.parts import content_role, field
from doctor.core.retention import (
    ResultMeasure,
    RetentionTotals,
    RetentionUnavailable,
    whole_number,
)
from doctor.core.turns import TURN
from doctor.core.sentinels import (
    ALREADY_TRUNCATED_PREFIXES,
    LAYERS,
    NONE,
    SENTINEL_PREFIXES,
    StubInfo,
    parse_stub,
    sentinel_kind,
)

if TYPE_CHECKING:
    from doctor.core.stored import StoredBudget, StoredTable

_LAYER_CODE = {layer: code for code, layer in enumerate(LAYERS)}
_OVERSIZED = 1
_ERROR = 2
_LAYER_SHIFT = 2
_ERRORS = (TypeError, AttributeError, ValueError, RecursionError)

BudgetLookup = Callable[[str], Budget]
# The analyzer's own fallback when no threshold is given (the CLI passes 25,000).
OVERSIZED_TOOL_RESULT_THRESHOLD_CHARS = 30_000
# Key for results whose name is not a string: Qwen's registry never matches them.
_NOT_A_NAME = object()
# A sentinel header to parse from the Contents when its row is read.
_LATER = object()
# The per-result columns and their array typecodes.
_COLUMNS = (("content_index", "I"), ("part_index", "I"), ("turn", "I"), ("chars", "d"), ("raw_chars", "Q"),
            ("flags", "B"), ("tool", "I"))


def _stored_budget(budget: Budget) -> StoredBudget:
    return budget.chars, budget.source, budget.detail, budget.oversized_above


def _js_iterable(parts: object) -> Iterable:
    """`for (const part of content.parts ?? [])`: JS throws on non-iterables."""
    if isinstance(parts, (list, tuple, str)):
        return parts
    if isinstance(parts, dict) or not hasattr(parts, "__iter__") or hasattr(parts, "keys"):
        raise RetentionUnavailable(f"content.parts is not iterable ({type(parts).__name__})")
    return parts


def function_response_of(part: object) -> object:
    """The functionResponse of a part when JS would see one (truthy), else None."""
    if type(part) is dict:
        fr = part.get("functionResponse")
        if fr is None:
            fr = part.get("function_response")
    else:
        fr = field(part, "functionResponse")
    if fr is None or (type(fr) is not dict and not js_truthy(fr)):
        return None
    return fr


def raw_result_text(fr: object) -> object:
    """`response.output ?? response.error`: the string the oversized rule measures."""
    response = field(fr, "response")
    if response is None:
        return None
    output = field(response, "output")
    return field(response, "error") if output is None else output


@dataclass(frozen=True, slots=True)
class ResultColumns:
    """Results column by column (`ResultTable.columns`): entry i of each list is the result of ordinal i.
    A result's tool, and so its budget, is a slot into `tools` and `budgets`; `stubs` holds the parsed
    pointer of each result a layer bounded, by ordinal. `chars` is `ResultMeasure.chars` as a float."""

    turns: list[int]
    chars: list[float]
    raw_chars: list[int]
    tool_slots: list[int]
    layers: list[str]
    oversized: list[bool]
    errors: list[bool]
    tools: list[str]
    budgets: list[Budget]
    stubs: dict[int, StubInfo]


class ResultTable:
    """Every functionResponse of a history, column by column, plus Qwen's counters.

    `extend` may be called again with Contents appended later (the live tracker
    does); numbering continues. Payload strings are measured, never kept; only
    names, call ids and parsed sentinel headers are referenced.
    """

    def __init__(self, budget_for: BudgetLookup, threshold: Budget, image_token_estimate: float,
                 contents: Sequence | None = None, exempt_prefixes: tuple[str, ...] = ALREADY_TRUNCATED_PREFIXES,
                 turns_marked: bool = False, measure: AgentMeasure | None = None, judge_sent: bool = False):
        """`contents`, when given, is the list being measured, kept by reference: sentinel
        headers are then parsed from it when a row is read instead of during the pass.
        Results starting with `exempt_prefixes` were bounded already and are never oversized
        (Qwen's two prefixes by default; another agent's rules name that agent's markers).
        `turns_marked`: the reader marked where each typed prompt starts (`doctor.core.turns`);
        otherwise a user Content with text and no tool result opens a turn. `measure`: the agent's
        own measure, taken of every result beside Qwen's figures (`sent`, `sent_tokens`);
        `judge_sent`: the budgets are in that measure's unit, so the oversized rule compares it
        (Codex's bytes) instead of the output's JS length."""
        self._exempt = exempt_prefixes
        self.turns_marked = turns_marked
        self.measure = measure
        self.judge_sent = judge_sent and measure is not None
        self.sent = array("d")  # the agent's size of each result (empty without a measure)
        self.sent_tokens = array("Q")  # its tokens by the agent's own estimate
        self.sent_total: float = 0
        self.sent_tokens_total = 0
        self.sent_largest: float = 0
        self._budget_for = budget_for
        self._threshold = threshold
        self._contents = contents
        self.image_token_estimate = image_token_estimate
        self.content_index = array("I")
        self.part_index = array("I")
        self.turn = array("I")
        self.chars = array("d")
        self.raw_chars = array("Q")
        self.flags = array("B")
        self.tool = array("I")
        self.call_ids: list[str | None] = []
        self.tools: list[str] = []
        self.budgets: list[Budget] = []
        self._limits: list[float] = []  # oversized when raw chars exceed this
        self._tool_index: dict[object, int] = {}
        self.stubs: dict[int, StubInfo | object] = {}  # sentinel rows: parsed, or _LATER
        self.count = 0
        self.total: float = 0
        self.largest: float = 0
        self.oversized = 0
        self.turns = 0

    def __len__(self) -> int:
        return self.count

    def stored(self) -> StoredTable:
        """The table as data, without the Contents and the budget lookup (a method of rules that hold
        functions): `doctor statusline` keeps a table between turns and hands it the lookup again
        (`measures_alike`). Raises ValueError for a table whose sentinel headers wait for its Contents."""
        if any(stub is _LATER for stub in self.stubs.values()):
            raise ValueError("a table whose sentinel headers are parsed later needs its Contents")
        if self.measure is not None:
            raise ValueError("a table taking an agent's own measure is not stored (the status line measures Qwen's way)")
        from doctor.core.stored import StoredTable

        return StoredTable(
            _stored_budget(self._threshold), self.image_token_estimate, list(self._exempt),
            *(getattr(self, name).tobytes() for name, _ in _COLUMNS),
            self.call_ids, self.tools, [_stored_budget(budget) for budget in self.budgets], self._limits,
            [(None if name is _NOT_A_NAME else name, slot) for name, slot in self._tool_index.items()],
            self.stubs, self.count, self.total, self.largest, self.oversized, self.turns, self.turns_marked)

    @classmethod
    def from_stored(cls, stored: StoredTable) -> ResultTable:
        """The table `stored` was made from, to be handed its budget lookup by `measures_alike`.
        Raises ValueError when the columns do not hold one entry per result."""
        table = cls(None, Budget(*stored.threshold), stored.image_token_estimate, None, tuple(stored.exempt),
                    stored.turns_marked)
        for name, typecode in _COLUMNS:
            column = array(typecode)
            column.frombytes(getattr(stored, name))
            if len(column) != stored.count:
                raise ValueError(f"stored column {name} holds {len(column)} entries for {stored.count} results")
            setattr(table, name, column)
        slots = len(stored.tools)
        if not (len(stored.call_ids) == stored.count and len(stored.budgets) == len(stored.limits) == slots
                and all(0 <= slot < slots for _, slot in stored.tool_index)
                and all(slot < slots for slot in table.tool)):
            raise ValueError("stored table columns disagree")
        table.call_ids, table.tools, table._limits = stored.call_ids, stored.tools, stored.limits
        table.budgets = [Budget(*budget) for budget in stored.budgets]
        table._tool_index = {_NOT_A_NAME if name is None else name: slot for name, slot in stored.tool_index}
        table.stubs = stored.stubs
        table.count, table.total, table.largest = stored.count, stored.total, stored.largest
        table.oversized, table.turns = stored.oversized, stored.turns
        return table

    def measures_alike(self, budget_for: BudgetLookup, threshold: Budget, image_token_estimate: float,
                       exempt_prefixes: tuple[str, ...] = ALREADY_TRUNCATED_PREFIXES) -> bool:
        """Whether these budgets give every row so far the figures it has (each tool's budget, the
        threshold, the image estimate, the exempt prefixes as when it was measured). If so, the
        table measures the rows to come with `budget_for`."""
        if (threshold, image_token_estimate, tuple(exempt_prefixes)) != (self._threshold, self.image_token_estimate,
                                                                          tuple(self._exempt)):
            return False
        for name, slot in self._tool_index.items():
            if isinstance(name, str) and budget_for(name) != self.budgets[slot]:
                return False
        self._budget_for = budget_for
        return True

    @property
    def totals(self) -> RetentionTotals:
        return RetentionTotals(self.count, self.total, self.largest, self.oversized)

    def _tool_slot(self, name: object) -> int:
        slot = self._tool_index.get(name)
        if slot is None:
            budget = self._budget_for(name) if isinstance(name, str) else self._threshold
            slot = self._tool_index[name] = len(self.tools)
            self.tools.append(name if isinstance(name, str) else "")
            self.budgets.append(budget)
            if budget.oversized_above is not None:
                self._limits.append(budget.oversized_above)
            elif math.isfinite(budget.chars):
                self._limits.append(budget.chars * COMBINED_PASS_TOLERANCE_FACTOR + TRUNCATION_FALLBACK_ENVELOPE_SLACK)
            else:
                self._limits.append(math.inf)
        return slot

    def extend(self, contents: Iterable, first_index: int = 0) -> None:
        """Measure the functionResponses of `contents`, numbered from `first_index`.

        Raises RetentionUnavailable where Qwen's analyzer would throw.
        """
        try:
            self._extend(contents, first_index)
        except RetentionUnavailable:
            raise
        except _ERRORS as exc:
            raise RetentionUnavailable(str(exc)) from exc

    def _extend(self, contents: Iterable, first_index: int) -> None:
        estimate = self.image_token_estimate
        add_content, add_part, add_turn = self.content_index.append, self.part_index.append, self.turn.append
        add_chars, add_raw, add_flags = self.chars.append, self.raw_chars.append, self.flags.append
        add_tool, add_call = self.tool.append, self.call_ids.append
        limits, tool_index, tool_slot, exempt = self._limits, self._tool_index, self._tool_slot, self._exempt
        count, total, largest, oversized, turn = self.count, self.total, self.largest, self.oversized, self.turns
        marked = self.turns_marked
        measure = self.measure.of if self.measure is not None else None
        judge_sent = self.judge_sent
        add_sent, add_sent_tokens = self.sent.append, self.sent_tokens.append
        sent_total, sent_tokens_total, sent_largest = self.sent_total, self.sent_tokens_total, self.sent_largest
        for content_index, content in enumerate(contents, first_index):
            if type(content) is dict:
                parts = content.get("parts")
                role = content.get("role")
                if marked:
                    mark = content.get(TURN)
                    if type(mark) is int:
                        turn = mark
            else:
                if content is None:
                    raise RetentionUnavailable("Cannot read properties of null (reading 'parts')")
                parts = field(content, "parts")
                role = content_role(content)
            if parts is None:
                continue
            if type(parts) is not list:
                parts = list(_js_iterable(parts))
            # Unmarked histories: a user Content with text and no tool result opens a turn.
            if not marked and role == "user" and _is_prompt(parts):
                turn += 1
            for part_index, part in enumerate(parts):
                if type(part) is dict:
                    fr = part.get("functionResponse")
                    if fr is None:
                        fr = part.get("function_response")
                        if fr is None:
                            continue
                    if type(fr) is not dict and not js_truthy(fr):
                        continue
                else:
                    if part is None:
                        raise RetentionUnavailable("Cannot read properties of null (reading 'functionResponse')")
                    fr = function_response_of(part)
                    if fr is None:
                        continue
                if type(fr) is dict and type(part) is dict and len(part) == 1:
                    response = fr.get("response")
                    name = fr.get("name")
                    call_id = fr.get("id")
                    if type(response) is dict:
                        output = response.get("output")
                        raw = response.get("error") if output is None else output
                    elif response is None:
                        output = raw = None
                    else:
                        output = field(response, "output")
                        raw = field(response, "error") if output is None else output
                    raw_len = js_len(raw) if isinstance(raw, str) else 0  # str, or a reader's MeasuredText
                    nested = fr.get("parts")
                    if (output is None or isinstance(output, str)) and type(response) is dict and type(nested) is not list:
                        chars = raw_len + FUNCTION_RESPONSE_WRAPPER_CHARS
                    else:
                        chars = function_response_chars(fr, estimate)
                else:
                    name, call_id, output, raw, raw_len, chars = _generic(part, fr, estimate)
                if type(name) is not str:
                    name = "" if name is None else name if isinstance(name, str) else _NOT_A_NAME
                slot = tool_index.get(name)
                if slot is None:
                    slot = tool_slot(name)
                flags = _ERROR if output is None and raw is not None else 0
                judged = raw_len
                if measure is not None:
                    size, tokens = measure(fr, raw, raw_len, name)
                    add_sent(size)
                    add_sent_tokens(tokens)
                    sent_total += size
                    sent_tokens_total += tokens
                    if size > sent_largest:
                        sent_largest = size
                    if judge_sent:
                        judged = size
                if isinstance(raw, str):
                    if judged > limits[slot] and not raw.startswith(exempt):
                        flags |= _OVERSIZED
                        oversized += 1
                    if raw.startswith(SENTINEL_PREFIXES):
                        layer = sentinel_kind(raw)
                        flags |= _LAYER_CODE[layer] << _LAYER_SHIFT
                        if layer != NONE:
                            if self._contents is None:
                                stub = parse_stub(raw)
                                if stub is not None:
                                    self.stubs[count] = stub
                            else:
                                self.stubs[count] = _LATER
                count += 1
                total += chars
                if chars > largest:
                    largest = chars
                add_content(content_index)
                add_part(part_index)
                add_turn(turn)
                add_chars(chars)
                add_raw(raw_len)
                add_flags(flags)
                add_tool(slot)
                add_call(call_id if type(call_id) is str else None)
        self.count, self.total, self.largest, self.oversized, self.turns = count, total, largest, oversized, turn
        self.sent_total, self.sent_tokens_total, self.sent_largest = sent_total, sent_tokens_total, sent_largest

    def row(self, ordinal: int) -> ResultMeasure:
        """The full row for one result, made on demand."""
        flags = self.flags[ordinal]
        slot = self.tool[ordinal]
        return ResultMeasure(
            ordinal=ordinal,
            content_index=self.content_index[ordinal],
            part_index=self.part_index[ordinal],
            turn=self.turn[ordinal],
            call_id=self.call_ids[ordinal],
            tool=self.tools[slot],
            chars=whole_number(self.chars[ordinal]),
            raw_chars=self.raw_chars[ordinal],
            is_error=bool(flags & _ERROR),
            budget=self.budgets[slot],
            oversized=bool(flags & _OVERSIZED),
            sentinel=LAYERS[flags >> _LAYER_SHIFT],
            stub=self.stub(ordinal),
            sent=whole_number(self.sent[ordinal]) if self.measure is not None else None,
            sent_tokens=self.sent_tokens[ordinal] if self.measure is not None else None,
            judged_by_sent=self.judge_sent,
        )

    def columns(self, length: int) -> ResultColumns:
        """The first `length` results column by column, as `row` gives them one by one, without making
        a row object per result: `doctor scan` stores hundreds of thousands of results, and a row each
        cost its workers more than all the rest of storing them."""
        flags = self.flags[:length]
        stubs = {ordinal: self.stub(ordinal) for ordinal in sorted(self.stubs) if ordinal < length}
        return ResultColumns(
            turns=self.turn[:length].tolist(),
            chars=self.chars[:length].tolist(),
            raw_chars=self.raw_chars[:length].tolist(),
            tool_slots=self.tool[:length].tolist(),
            layers=[LAYERS[code >> _LAYER_SHIFT] for code in flags],
            oversized=[bool(code & _OVERSIZED) for code in flags],
            errors=[bool(code & _ERROR) for code in flags],
            tools=list(self.tools),
            budgets=list(self.budgets),
            stubs={ordinal: stub for ordinal, stub in stubs.items() if stub is not None},
        )

    def stub(self, ordinal: int) -> StubInfo | None:
        stub = self.stubs.get(ordinal)
        if stub is not _LATER:
            return stub
        parts = field(self._contents[self.content_index[ordinal]], "parts")
        fr = function_response_of(parts[self.part_index[ordinal]])
        raw = raw_result_text(fr) if fr is not None else None
        return parse_stub(raw) if isinstance(raw, str) else None


def qwen_retention_totals(
    history: Iterable,
    *,
    threshold_chars: float | None = None,
    resolve_tool_budget: Callable[[str], float | None] | None = None,
    image_token_estimate: float | None = None,
) -> RetentionTotals:
    """`analyzeToolResultRetention(history, options)`'s counters, with Qwen's option names.

    `resolve_tool_budget(name)` returns a budget or None (JS undefined), which falls
    back to `threshold_chars` (30,000 when not given, as in Qwen).
    """
    threshold = Budget(OVERSIZED_TOOL_RESULT_THRESHOLD_CHARS if threshold_chars is None else threshold_chars,
                       "threshold")

    def budget_for(name: str) -> Budget:
        chars = resolve_tool_budget(name) if resolve_tool_budget is not None else None
        return threshold if chars is None else Budget(chars, "tool", name)

    estimate = DEFAULT_IMAGE_TOKEN_ESTIMATE if image_token_estimate is None else image_token_estimate
    table = ResultTable(budget_for, threshold, estimate, history if isinstance(history, Sequence) else None)
    table.extend(history)
    return table.totals


def _is_prompt(parts: Sequence) -> bool:
    """Text and no tool result among `parts`."""
    has_text = False
    for part in parts:
        if function_response_of(part) is not None:
            return False
        if not has_text and isinstance(field(part, "text"), str):
            has_text = True
    return has_text


def _generic(part: object, fr: object, estimate: float) -> tuple:
    """(name, call id, output, raw, raw length, chars) for any shape of part."""
    name, call_id, response = field(fr, "name"), field(fr, "id"), field(fr, "response")
    output = field(response, "output") if response is not None else None
    raw = (field(response, "error") if output is None else output) if response is not None else None
    raw_len = js_len(raw) if isinstance(raw, str) else 0
    return name, call_id, output, raw, raw_len, estimate_part_chars(part, estimate)
