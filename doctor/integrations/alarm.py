"""The oversized alarm an after-tool hook raises the moment a big result lands.

A result is judged by the rule `doctor memory` uses for that agent's sessions, on the size that
reaches the model (`doctor.integrations.delivery`: what the agent still does to the result after
its hook ran), so the hook's verdict is the verdict `doctor memory --json` gives the same result
afterwards:
- Claude Code, Gemini CLI, Codex: the agent's own limits (`doctor.core.agent_rules`, read from the
  same settings files and environment), a result the agent persists or truncates after the hook
  being silent;
- Qwen Code: Qwen's rule, oversized above 2 × the tool's budget + 500 (budgets from Qwen's
  settings).
doctor's own `[budgets]` win for every agent, as in `doctor memory`. Nothing is read from the
transcript, and no settings at all for a result of at most 500 chars (every call's common case).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from doctor.core.budgets import COMBINED_PASS_TOLERANCE_FACTOR, TRUNCATION_FALLBACK_ENVELOPE_SLACK
from doctor.integrations.delivery import agent_gate, rules_name, sent_text, utf16_length
from doctor.integrations.relay import spill_named
from doctor.report.figures import figure
from doctor.report.inert import inert_line

# At most this many chars is never reported: Qwen's rule cannot reach it, and no other agent's limit is that low.
FLOOR = TRUNCATION_FALLBACK_ENVELOPE_SLACK


@dataclass(frozen=True)
class Alarm:
    """An oversized result: `chars` its size in `unit` (the agent's own measure: chars, bytes for Codex),
    `tokens` by the agent's own estimate (None for Qwen's rule, which states chars alone), `limit` the
    limit in that agent's words, `source` where it comes from (None for Qwen's rule, whose budget is
    stated as 2 × budget + 500), `spill` the agent's own spill file the output names, if any
    (`doctor.integrations.relay.spill_named`: never a path outside the agent's spill folders)."""

    tool: str
    chars: int
    limit: str
    source: str | None
    spill: str | None
    unit: str = "chars"
    tokens: int | None = None

    def _size(self) -> str:
        tokens = f" (≈{figure(self.tokens)} tokens)" if self.tokens is not None else ""
        return f"{figure(self.chars)} {self.unit}{tokens}"

    def for_user(self, shows: str = "/doctor:memory") -> str:
        """The user's line; `shows`: what that agent's user types to see the session (`typed_command`)."""
        where = f"; full output in {self.spill}" if self.spill else ""
        over = f"over {self.limit} ({self.source})" if self.source else f"over 2× its {self.limit} + 500"
        return (f"doctor: {inert_line(self.tool)} returned {self._size()}, {over}: it stays in "
                f"context on every later turn{where}. {shows} shows the session.")

    def for_model(self) -> str:
        page = (f" Its full output is in {self.spill}; page in only the part you need from there instead of "
                "re-running the tool." if self.spill else " Avoid re-running it for more; ask for narrower output.")
        above = f"above {self.limit} ({self.source})" if self.source else f"above twice its {self.limit}"
        return f"The last {inert_line(self.tool)} result is {self._size()}, {above}.{page}"


def check(agent: str, tool: str, response, cwd: Path | None, *, model: str | None = None,
          env: Mapping[str, str] | None = None) -> Alarm | None:
    """An Alarm when `response` of `tool`, as the model will get it from `agent`, is oversized; else None."""
    text = sent_text(agent, tool, response)
    if text is None:
        return None  # the agent persisted it: the model gets its stub
    chars = utf16_length(text)
    if chars <= FLOOR:
        return None  # the common case stays cheap: no settings read
    from doctor.config import load_budget_overrides

    env = os.environ if env is None else env
    if agent == "qwen":
        return _qwen(tool, text, chars, cwd, load_budget_overrides(), env)
    from doctor.core.agent_measure import measure_for
    from doctor.core.agent_rules import rules_for

    name = rules_name(agent, tool)
    rules = rules_for(agent, project_dir=cwd, env=env, model=model, overrides=load_budget_overrides())
    if rules is None or text.startswith(rules.exempt_prefixes) or chars > agent_gate(agent, name, rules):
        return None  # the agent's own stub, or a result it persists or cuts before the model sees it
    measure = measure_for(agent)
    size = measure.size_of_text(text)  # what the agent's limits count: chars, or Codex's bytes
    if size <= rules.result_budget(name).oversized_above:
        return None
    budget = rules.agent_budget(name)
    return Alarm(tool, size, _limit(rules, budget), budget.detail, spill_named(text, agent, env), measure.unit,
                 measure.tokens_of_text(text, name))


def _qwen(tool: str, text: str, chars: int, cwd: Path | None, overrides: dict, env: Mapping[str, str]) -> Alarm | None:
    from doctor.assemble import ReportOptions, resolve_settings

    budget = resolve_settings(ReportOptions(tool_budgets=overrides), cwd).budgets.result_budget(tool).chars
    if not math.isfinite(budget) or chars <= budget * COMBINED_PASS_TOLERANCE_FACTOR + TRUNCATION_FALLBACK_ENVELOPE_SLACK:
        return None
    return Alarm(tool, chars, f"{figure(budget)}-char budget", None, spill_named(text, "qwen", env))


def _limit(rules, budget) -> str:
    """`Gemini CLI's 40,000-char limit`, `Claude Code's 25,000-token limit (≈100,000 chars)`."""
    unit = {"chars": "char", "bytes": "byte", "tokens": "token"}.get(budget.unit, budget.unit)
    said = f"{rules.client}'s {figure(budget.value)}-{unit} limit"
    if budget.unit != rules.unit:
        said += f" (≈{figure(budget.chars)} {rules.unit})"
    if rules.allowance:
        said += f" + {figure(rules.allowance)} {rules.unit} of header"
    return said
