"""The oversized alarm an after-tool hook raises the moment a big result lands.

The hook's stdin carries the tool's name and response. The response's text (the model-facing
field where the agent has one: Gemini's `llmContent`, `output`, Claude's `stdout` + `stderr`,
else every string in it) is measured in UTF-16 units, as the agents count, and compared with
Qwen's rule, the one doctor's reports use: oversized above 2 × the tool's budget + 500 (budgets
from Qwen's settings and doctor's config, as for `doctor memory`). Nothing is read from the
transcript, so the hook costs the same on the first call and the thousandth.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from doctor.core.budgets import COMBINED_PASS_TOLERANCE_FACTOR, TRUNCATION_FALLBACK_ENVELOPE_SLACK
from doctor.report.figures import figure
from doctor.report.inert import inert_line

MODEL_FIELDS = ("llmContent", "output", "content", "result", "text")
SPILL = re.compile(r"(?:saved to|Persisted tool-output artifact|written to)[:\s]+(/[^\s\"'<>]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Alarm:
    tool: str
    chars: int
    budget: float
    spill: str | None

    def for_user(self) -> str:
        where = f"; full output in {self.spill}" if self.spill else ""
        return (f"doctor: {inert_line(self.tool)} returned {figure(self.chars)} chars, over 2× its "
                f"{figure(self.budget)}-char budget + 500: it stays in context on every later turn{where}. "
                "/doctor:memory shows the session.")

    def for_model(self) -> str:
        page = (f" Its full output is in {self.spill}; page in only the part you need from there instead of "
                "re-running the tool." if self.spill else " Avoid re-running it for more; ask for narrower output.")
        return (f"The last {inert_line(self.tool)} result is {figure(self.chars)} chars, above twice its "
                f"{figure(self.budget)}-char budget.{page}")


def response_text(response) -> str:
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in MODEL_FIELDS:
            if key in response:
                return response_text(response[key])
        if "stdout" in response or "stderr" in response:
            return "".join(value for value in (response.get("stdout"), response.get("stderr")) if isinstance(value, str))
        return "".join(response_text(value) for value in response.values())
    if isinstance(response, list):
        return "".join(response_text(value) for value in response)
    return ""


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def check(tool: str, response, cwd: Path | None) -> Alarm | None:
    """An Alarm when `response` is oversized for `tool`, else None."""
    text = response_text(response)
    chars = utf16_length(text)
    if chars <= TRUNCATION_FALLBACK_ENVELOPE_SLACK:
        return None  # below any budget's slack: no settings to read, the common case stays cheap
    from doctor.assemble import ReportOptions, resolve_settings
    from doctor.config import load_budget_overrides

    budgets = resolve_settings(ReportOptions(tool_budgets=load_budget_overrides()), cwd).budgets
    budget = budgets.result_budget(tool).chars
    if not math.isfinite(budget) or chars <= budget * COMBINED_PASS_TOLERANCE_FACTOR + TRUNCATION_FALLBACK_ENVELOPE_SLACK:
        return None
    spill = SPILL.search(text)
    return Alarm(tool, chars, budget, spill.group(1).rstrip(".") if spill else None)
