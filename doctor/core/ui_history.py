"""`largeOutputsInUIHistory`: oversized outputs also kept in the UI's history.

Qwen's doctor walks `context.ui.history` `tool_group` items and counts a tool
whose display text is longer than twice its budget (no +500 slack, no sentinel
skip). Only string displays and valid `shell_result` objects have a text;
Qwen skips structured displays (file diffs, todo lists) silently, doctor
counts and sizes them separately so they do not vanish from the report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from msgspec import Struct

from doctor.core.budgets import COMBINED_PASS_TOLERANCE_FACTOR, Budget, BudgetRegistry
from doctor.core.jsvalues import js_len, js_stringify_len
from doctor.core.parts import field

TEXT = "text"
SHELL_RESULT = "shell_result"
STRUCTURED = "structured"
EMPTY = "empty"

_SHELL_OUTCOMES = frozenset({"completed", "failed", "cancelled", "timed_out"})
_MAX_SAFE_INTEGER = 2**53 - 1


def _is_safe_integer(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and float(value).is_integer() and abs(value) <= _MAX_SAFE_INTEGER


def _string_list(value: object) -> bool:
    return isinstance(value, list) and len(value) <= 32 and all(isinstance(s, str) for s in value)


def is_shell_result_display(value: object) -> bool:
    """Port of `isShellResultDisplay` (chunk-4M7RD5QQ.js): a strict schema check."""
    if not isinstance(value, Mapping):
        return False
    v = value
    return (
        v.get("type") == "shell_result"
        and v.get("version") == 1
        and not isinstance(v.get("version"), bool)
        and isinstance(v.get("text"), str)
        and isinstance(v.get("output"), str)
        and isinstance(v.get("directory"), str)
        and all(v.get(k) is None and k in v or _is_safe_integer(v.get(k)) for k in ("exitCode", "signal", "pid"))
        and ("error" in v and v["error"] is None or isinstance(v.get("error"), str))
        and isinstance(v.get("outcome"), str)
        and v["outcome"] in _SHELL_OUTCOMES
        and isinstance(v.get("truncated"), bool)
        and _string_list(v.get("notices"))
        and _string_list(v.get("outputFiles"))
        and js_len(v["directory"]) + sum(js_len(s) for s in v["outputFiles"]) <= 8192
    )


def display_text(display: object) -> str | None:
    """Qwen's `shellResultText`: the display string, a shell result's text, else None."""
    if isinstance(display, str):
        return display
    if is_shell_result_display(display):
        return display["text"]
    return None


class UiToolMeasure(Struct, frozen=True):
    """One tool of a UI tool_group: how big its display is and whether it counts."""

    item_index: int
    tool: str
    call_id: str | None
    kind: str
    chars: int
    budget: Budget
    large: bool


class UiScan(Struct, frozen=True):
    large_outputs: int
    tools: tuple[UiToolMeasure, ...]

    @property
    def structured(self) -> tuple[UiToolMeasure, ...]:
        return tuple(t for t in self.tools if t.kind == STRUCTURED)

    @property
    def display_chars(self) -> int:
        return sum(t.chars for t in self.tools)


class MeasuredUi:
    """A UI history whose tool displays are measured once: name, call id, kind and size, all but the budget
    (which the settings decide). `doctor whatif` measures one session's UI under the session's settings and
    each replayed one; a structured display's `JSON.stringify` length, the costly part, does not change."""

    __slots__ = ("shapes",)

    def __init__(self, ui_history: Iterable):
        self.shapes = _shapes(ui_history)


def scan_ui_history(ui_history: Iterable | MeasuredUi | None, budgets: BudgetRegistry) -> UiScan:
    """Measure every tool display in the UI history and count Qwen's large outputs."""
    shapes = ui_history.shapes if isinstance(ui_history, MeasuredUi) else _shapes(ui_history)
    budget_of: dict[str, Budget] = {}  # per tool name: the lookup walks names, migrations and overrides
    measures = [_judged(shape, budgets, budget_of) for shape in shapes]
    return UiScan(sum(measure.large for measure in measures), tuple(measures))


def _shapes(ui_history: Iterable | None) -> list[tuple]:
    shapes = []
    for index, item in enumerate(ui_history or ()):
        if field(item, "type") != "tool_group":
            continue
        for tool in field(item, "tools") or ():
            shapes.append(_shape(index, tool))
    return shapes


def _shape(index: int, tool: object) -> tuple:
    """(item index, name, call id, kind, chars) of one tool's display: what no setting changes."""
    name = field(tool, "name")
    name = name if isinstance(name, str) else ""
    display = field(tool, "resultDisplay")
    text = display_text(display)
    call_id = field(tool, "callId")
    call_id = call_id if isinstance(call_id, str) else None
    if text is not None:
        return index, name, call_id, SHELL_RESULT if not isinstance(display, str) else TEXT, js_len(text)
    if display is None:
        return index, name, call_id, EMPTY, 0
    try:
        chars = js_stringify_len(display) or 0
    except ValueError:
        chars = 0
    return index, name, call_id, STRUCTURED, chars


def _judged(shape: tuple, budgets: BudgetRegistry, budget_of: dict[str, Budget]) -> UiToolMeasure:
    """The measure with the tool's display budget, and whether Qwen counts it as a large output
    (`budget_of`: the display budgets already looked up, by name)."""
    index, name, call_id, kind, chars = shape
    budget = budget_of.get(name)
    if budget is None:
        budget = budget_of[name] = budgets.display_budget(name)
    large = kind in (SHELL_RESULT, TEXT) and budget.finite and chars > budget.chars * COMBINED_PASS_TOLERANCE_FACTOR
    return UiToolMeasure(index, name, call_id, kind, chars, budget, large)
