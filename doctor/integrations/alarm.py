"""The oversized alarm an after-tool hook raises the moment a big result lands.

A result is judged by the rule `doctor memory` uses for that agent's sessions, on the size that
reaches the model (`doctor.integrations.delivery`: what the agent still does to the result after
its hook ran), so the hook's verdict is the verdict `doctor memory --json` gives the same result
afterwards:
- Claude Code, Gemini CLI, Codex: the agent's own limits (`doctor.core.agent_rules`, read from the
  same settings files and environment), a result the agent persists or truncates after the hook
  being silent;
- Qwen Code: Qwen's rule, oversized above 2 × the tool's budget + 500 (budgets from Qwen's
  settings), on what Qwen's gate, truncation and batch budget leave of the result after the hook
  (`doctor.integrations.qwen_after_hook`): a result Qwen cuts is judged by its cut, as `doctor memory`
  judges it, and the file Qwen's notice names is the one the alarm names.
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
    limit in that agent's words, `source` where it comes from; `doubled`: Qwen's rule, stated as
    2 × budget + 500; `spill` the agent's own spill file the output names, if any
    (`doctor.integrations.relay.spill_named`: never a path outside the agent's spill folders)."""

    tool: str
    chars: int
    limit: str
    source: str | None
    spill: str | None
    unit: str = "chars"
    tokens: int | None = None
    doubled: bool = False  # Qwen's rule: oversized above 2 × the budget + 500

    def _size(self) -> str:
        tokens = f" (≈{figure(self.tokens)} tokens)" if self.tokens is not None else ""
        return f"{figure(self.chars)} {self.unit}{tokens}"

    def for_user(self, shows: str = "/doctor:memory") -> str:
        """The user's line; `shows`: what that agent's user types to see the session (`typed_command`)."""
        where = f"; full output in {self.spill}" if self.spill else ""
        over = f"over 2× its {self.limit} + 500" if self.doubled else f"over {self.limit}"
        over += f" ({self.source})" if self.source else ""
        return (f"doctor: {inert_line(self.tool)} returned {self._size()}, {over}: it stays in "
                f"context on every later turn{where}. {shows} shows the session.")

    def for_model(self) -> str:
        page = (f" Its full output is in {self.spill}; page in only the part you need from there instead of "
                "re-running the tool." if self.spill else " Avoid re-running it for more; ask for narrower output.")
        above = (f"above twice its {self.limit}" if self.doubled else f"above {self.limit}") \
            + (f" ({self.source})" if self.source else "")
        return f"The last {inert_line(self.tool)} result is {self._size()}, {above}.{page}"


def check(agent: str, tool: str, response, cwd: Path | None, *, model: str | None = None,
          env: Mapping[str, str] | None = None, call_id: str | None = None) -> Alarm | None:
    """An Alarm when `response` of `tool`, as the model will get it from `agent`, is oversized; else None.
    `call_id`: the call's id as the agent names its spill files after it (Qwen's `tool_call_id`)."""
    text = sent_text(agent, tool, response)
    if text is None:
        return None  # the agent persisted it: the model gets its stub
    chars = utf16_length(text)
    if chars <= FLOOR:
        return None  # the common case stays cheap: no settings read
    from doctor.config import load_budget_overrides

    env = os.environ if env is None else env
    if agent == "qwen":
        return _qwen(tool, text, cwd, load_budget_overrides(), call_id, env)
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


def _qwen(tool: str, text: str, cwd: Path | None, overrides: dict, call_id: str | None,
          env: Mapping[str, str]) -> Alarm | None:
    from doctor.assemble import ReportOptions, resolve_settings

    budgets = resolve_settings(ReportOptions(tool_budgets=overrides, env=env), cwd).budgets
    found = budgets.result_budget(tool)
    budget = found.chars
    if not math.isfinite(budget):
        return None
    from doctor.integrations.qwen_after_hook import delivered, temp_dir

    got = delivered(tool, text, call_id, budgets.limits, temp_dir(cwd, env))
    chars = utf16_length(got.text)
    if got.text.startswith(budgets.exempt_prefixes) \
            or chars <= budget * COMBINED_PASS_TOLERANCE_FACTOR + TRUNCATION_FALLBACK_ENVELOPE_SLACK:
        return None
    # The file Qwen writes after the hook (its path built from Qwen's rule, the call id reduced to a base
    # name: inside Qwen's spill folder), else one the output itself names, if Qwen's own.
    spill = inert_line(got.spill) if got.spill else spill_named(got.text, "qwen", env)
    return Alarm(tool, chars, f"{figure(budget)}-char budget", _qwen_source(found), spill, doubled=True)


def _qwen_source(budget) -> str:
    """Where a Qwen budget comes from, in Qwen's terms (doctor's own: its config file and key, or the flag)."""
    if budget.source == "override":
        return f"doctor's own: {budget.detail}"
    if budget.source == "threshold":
        return "Qwen Code's tools.truncateToolOutputThreshold"
    if budget.source == "mcp":
        return f"Qwen Code's default for an MCP tool ({budget.detail})"
    return "Qwen Code's own for this tool"


def _limit(rules, budget) -> str:
    """Whose limit, in its own unit: `Claude Code's 25,000-token limit (≈100,000 chars)`; doctor's own budget
    (`doctor's 10,000-char budget`, from its config or a flag: `budget.detail` says which); the limit doctor
    holds a tool the agent never cuts to (Gemini CLI's read_file). The agent's header allowance is its own."""
    unit = {"chars": "char", "bytes": "byte", "tokens": "token"}.get(budget.unit, budget.unit)
    if budget.source == "override":
        said = f"doctor's {figure(budget.value)}-{unit} budget"
    elif not budget.own:
        said = f"the {figure(budget.value)}-{unit} limit doctor holds it to"
    else:
        said = f"{rules.client}'s {figure(budget.value)}-{unit} limit"
    if budget.unit != rules.unit:
        said += f" (≈{figure(budget.chars)} {rules.unit})"
    if rules.allowance:
        said += f" + {figure(rules.allowance)} {rules.unit} of {rules.client}'s header"
    return said
