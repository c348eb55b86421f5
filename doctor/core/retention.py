"""Tool-result retention: Qwen Code 0.24.4's `/doctor memory` numbers, exactly.

Two passes share the same primitives:
- `qwen_retention_totals` is the port of `analyzeToolResultRetention`
  (chunk-CK5HUN74.js): one tight loop, no per-result objects, so it stays
  close to V8's speed on a 100,000-result history;
- `measure_tool_results` produces one `ResultMeasure` per functionResponse
  (what Qwen does not show: sentinel layer, pointer, raw size, budget source).
Both read the history by reference; neither copies or re-encodes a payload.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from doctor.core.budgets import (
    COMBINED_PASS_TOLERANCE_FACTOR,
    TRUNCATION_FALLBACK_ENVELOPE_SLACK,
    Budget,
    BudgetRegistry,
)
from doctor.core.estimator import (
    DEFAULT_IMAGE_TOKEN_ESTIMATE,
    FUNCTION_RESPONSE_WRAPPER_CHARS,
    TOKEN_TO_CHAR_RATIO,
    estimate_part_chars,
    tokens_for_chars,
)
from doctor.core.jsvalues import js_len, js_truthy
from doctor.core.parts import content_role, field
from doctor.core.sentinels import (
    HEAD_CHARS,
    NONE,
    PERSISTED_OUTPUT_OPEN_TAG,
    TOOL_OUTPUT_TRUNCATED_PREFIX,
    StubInfo,
    parse_stub,
    sentinel_kind,
)

# The analyzer's own fallback when no threshold is given (the CLI passes 25,000).
OVERSIZED_TOOL_RESULT_THRESHOLD_CHARS = 30_000
_ALREADY_TRUNCATED = (TOOL_OUTPUT_TRUNCATED_PREFIX, PERSISTED_OUTPUT_OPEN_TAG)

BudgetResolver = Callable[[str], "float | None"]


class RetentionUnavailable(Exception):
    """The history has a shape on which Qwen's analyzer throws.

    Qwen then logs a warning and omits the retention section; doctor does the
    same and says why.
    """


@dataclass(frozen=True, slots=True)
class RetentionTotals:
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


@dataclass(frozen=True, slots=True)
class RetentionStats:
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
            "totalChars": _json_number(self.total_chars),
            "largestResultChars": _json_number(self.largest_result_chars),
            "oversizedResultCount": self.oversized_result_count,
            "oversizedThresholdChars": _json_number(self.oversized_threshold_chars),
            "largeOutputsInUIHistory": self.large_outputs_in_ui_history,
            "presentInCompressionInput": self.present_in_compression_input,
        }

    @property
    def total_tokens(self) -> int:
        return tokens_for_chars(self.total_chars)


def _json_number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _js_iterable(parts: object) -> Iterable:
    """`for (const part of content.parts ?? [])`: JS throws on non-iterables."""
    if isinstance(parts, (list, tuple, str)):
        return parts
    if isinstance(parts, Mapping) or not hasattr(parts, "__iter__"):
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


def _truthy_key(mapping: dict, camel: str, snake: str) -> bool:
    value = mapping.get(camel)
    if value is None:
        value = mapping.get(snake)
    return value is not None and js_truthy(value)


def _part_chars(part: object, fr: object, image_token_estimate: float, raw: object = None, raw_len: int = 0) -> float:
    """estimatePartChars for a part known to hold a functionResponse, fast for dicts.

    `raw` and `raw_len`, when given, are a string already measured: not measured twice.
    """
    if type(part) is dict and type(fr) is dict:
        if _truthy_key(part, "inlineData", "inline_data") or _truthy_key(part, "fileData", "file_data"):
            return image_token_estimate * TOKEN_TO_CHAR_RATIO
        text = part.get("text")
        if type(text) is str:
            return js_len(text)
        response = fr.get("response")
        total = 0
        if type(response) is dict:
            output = response.get("output")
            if type(output) is str:
                total = raw_len if output is raw else js_len(output)
            else:
                error = response.get("error")
                if type(error) is str:
                    total = raw_len if error is raw else js_len(error)
        elif response is not None:
            return estimate_part_chars(part, image_token_estimate)
        nested = fr.get("parts")
        if type(nested) is list:
            for inner in nested:
                total += estimate_part_chars(inner, image_token_estimate)
        return total + FUNCTION_RESPONSE_WRAPPER_CHARS
    return estimate_part_chars(part, image_token_estimate)


def _is_oversized(raw: object, budget: float, raw_len: int | None = None) -> bool:
    if type(raw) is not str or raw.startswith(_ALREADY_TRUNCATED) or not math.isfinite(budget):
        return False
    length = js_len(raw) if raw_len is None else raw_len
    return length > budget * COMBINED_PASS_TOLERANCE_FACTOR + TRUNCATION_FALLBACK_ENVELOPE_SLACK


def qwen_retention_totals(
    history: Iterable,
    *,
    threshold_chars: float | None = None,
    resolve_tool_budget: BudgetResolver | None = None,
    image_token_estimate: float | None = None,
) -> RetentionTotals:
    """Port of `analyzeToolResultRetention(history, options)`'s counters.

    `resolve_tool_budget(name)` returns a budget or None (JS undefined), which
    falls back to `threshold_chars`.
    """
    threshold = OVERSIZED_TOOL_RESULT_THRESHOLD_CHARS if threshold_chars is None else threshold_chars
    estimate = DEFAULT_IMAGE_TOKEN_ESTIMATE if image_token_estimate is None else image_token_estimate
    budget_of: dict[str, float] = {}
    count = oversized = 0
    total = largest = 0
    try:
        for content in history:
            parts = content.get("parts") if type(content) is dict else field(content, "parts")
            if parts is None:
                continue
            if type(parts) is not list:
                parts = _js_iterable(parts)
            for part in parts:
                fr = function_response_of(part)
                if fr is None:
                    continue
                chars = _part_chars(part, fr, estimate)
                count += 1
                total += chars
                if chars > largest:
                    largest = chars
                name = fr.get("name") if type(fr) is dict else field(fr, "name")
                budget = budget_of.get(name) if type(name) is str else None
                if budget is None:
                    budget = _resolve(name, resolve_tool_budget, threshold)
                    if type(name) is str:
                        budget_of[name] = budget
                if _is_oversized(raw_result_text(fr), budget):
                    oversized += 1
    except (TypeError, AttributeError, ValueError, RecursionError) as exc:
        raise RetentionUnavailable(str(exc)) from exc
    return RetentionTotals(count, total, largest, oversized)


def _resolve(name: object, resolver: BudgetResolver | None, threshold: float) -> float:
    if resolver is None:
        return threshold
    budget = resolver(name if name is not None else "") if isinstance(name, str) or name is None else None
    return threshold if budget is None else budget


@dataclass(frozen=True, slots=True)
class ResultMeasure:
    """One tool result as the model holds it, measured; it keeps no payload.

    chars: the estimator's figure (what Qwen sums); raw_chars: the output-or-error
    string alone (what the oversized rule compares); head: up to 8 KB of a
    sentinel header, kept only for results some layer bounded.
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

    @property
    def tokens(self) -> int:
        return tokens_for_chars(self.chars)

    @property
    def budget_ratio(self) -> float | None:
        """raw chars / budget: above 2 (plus 500 chars of slack) is oversized."""
        if not self.budget.finite or self.budget.chars <= 0:
            return None
        return self.raw_chars / self.budget.chars


def _is_user_prompt(content: object, parts: Sequence) -> bool:
    """A user Content that carries text and no tool result: the start of a turn."""
    if content_role(content) != "user":
        return False
    has_text = False
    for part in parts:
        if function_response_of(part) is not None:
            return False
        if isinstance(field(part, "text"), str):
            has_text = True
    return has_text


def measure_tool_results(
    history: Iterable,
    budgets: BudgetRegistry,
    *,
    image_token_estimate: float = DEFAULT_IMAGE_TOKEN_ESTIMATE,
    first_index: int = 0,
    first_ordinal: int = 0,
    first_turn: int = 0,
) -> list[ResultMeasure]:
    """One ResultMeasure per functionResponse part, in history order.

    `first_*` continue the numbering when `history` is the tail of a longer one.
    """
    measures: list[ResultMeasure] = []
    budget_of: dict[str, Budget] = {}  # one lookup (and one Budget object) per tool name
    turn = first_turn
    try:
        for content_index, content in enumerate(history, first_index):
            parts = field(content, "parts")
            if parts is None:
                continue
            parts = list(_js_iterable(parts)) if type(parts) is not list else parts
            if _is_user_prompt(content, parts):
                turn += 1
            for part_index, part in enumerate(parts):
                fr = function_response_of(part)
                if fr is None:
                    continue
                measures.append(
                    _measure(part, fr, budgets, budget_of, image_token_estimate,
                             ordinal=first_ordinal + len(measures), position=(content_index, part_index), turn=turn)
                )
    except (TypeError, AttributeError, ValueError, RecursionError) as exc:
        raise RetentionUnavailable(str(exc)) from exc
    return measures


def _measure(part, fr, budgets: BudgetRegistry, budget_of: dict, image_token_estimate: float, *,
             ordinal, position, turn) -> ResultMeasure:
    """One row; each string is measured once (astral text costs a scan, the rest is O(1))."""
    if type(fr) is dict:
        name, response, call_id = fr.get("name"), fr.get("response"), fr.get("id")
    else:
        name, response, call_id = field(fr, "name"), field(fr, "response"), field(fr, "id")
    output = field(response, "output") if response is not None else None
    error = field(response, "error") if response is not None and output is None else None
    raw = error if output is None else output
    tool = name if isinstance(name, str) else ""
    budget = budget_of.get(tool) if isinstance(name, str) or name is None else budgets.threshold
    if budget is None:
        budget = budget_of[tool] = budgets.result_budget(tool)
    raw_len = js_len(raw) if isinstance(raw, str) else 0
    kind = sentinel_kind(raw)
    return ResultMeasure(
        ordinal=ordinal,
        content_index=position[0],
        part_index=position[1],
        turn=turn,
        call_id=call_id if isinstance(call_id, str) else None,
        tool=tool,
        chars=_part_chars(part, fr, image_token_estimate, raw, raw_len),
        raw_chars=raw_len,
        is_error=response is not None and output is None and error is not None,
        budget=budget,
        oversized=_is_oversized(raw, budget.chars, raw_len if isinstance(raw, str) else None),
        sentinel=kind,
        stub=parse_stub(raw[:HEAD_CHARS]) if kind != NONE else None,
    )


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
