"""What every agent's budget table is made of: a limit with its unit and where it came from.

Qwen's budgets (`doctor.core.budgets`) keep Qwen's own shapes for parity; the
other agents' tables are built from these pieces so a report can say, in that
agent's terms, which limit a result was held to and why that number is in force.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from msgspec import Struct, field

from doctor.core.budgets import Budget, override_origin

CHARS = "chars"
BYTES = "bytes"
TOKENS = "tokens"


class AgentBudget(Struct, frozen=True):
    """One limit as the agent states it, and the chars doctor compares results with.

    `value` is in `unit`; `chars` is the same limit in the size the agent measures results in
    (`AgentRules.unit`: UTF-16 chars, or UTF-8 bytes for Codex; tokens converted with the agent's
    own estimate when it has one, else chars ÷ 4, as `conversion` says).
    `source` is "default" (built into the client version), "env", "settings" or "override" (doctor's
    own budget: `detail` names the config file and key, or the flag); `detail` names the env var, file
    and key, or the client version. `own` False: the agent cuts none of these tools' output, and the
    limit is the one doctor holds them to (Gemini CLI's threshold, for the tools it does not truncate).
    """

    value: float
    unit: str
    chars: float
    source: str
    detail: str
    conversion: str = ""
    own: bool = True

    def as_budget(self) -> Budget:
        return Budget(self.chars, self.source, self.detail)

    def to_json(self) -> dict:
        def number(x: float):
            return None if not math.isfinite(x) else int(x) if float(x).is_integer() else x
        return {"value": number(self.value), "unit": self.unit, "chars": number(self.chars),
                "source": self.source, "detail": self.detail, "conversion": self.conversion, "own": self.own}


class ToolRule(Struct, frozen=True):
    """Which tools a budget covers (exact names, or a predicate such as "is an MCP tool")."""

    label: str
    budget: AgentBudget
    names: frozenset[str] = frozenset()
    matches: Callable[[str], bool] | None = None

    def covers(self, name: str) -> bool:
        return name in self.names or (self.matches is not None and self.matches(name))


class AgentRules(Struct, frozen=True):
    """An agent's limits for one client version, looked up by tool name.

    It answers what the analysis asks a budget registry (`result_budget`, `threshold`,
    `exempt_prefixes`). `tools` are tried in order; `fallback` covers every other tool. `overrides`
    (doctor's `--tool-budget NAME=N`, chars) win over everything. `allowance` is what
    the agent adds around a bounded result (headers, notices) and is not counted
    against the limit. `settings` lists the other limits in force, for the report.
    """

    agent: str
    client: str
    version: str
    tools: tuple[ToolRule, ...]
    fallback: ToolRule
    rule: str
    allowance: float = 0
    overrides: Mapping[str, float] = field(default_factory=dict)
    settings: tuple[tuple[str, AgentBudget], ...] = ()
    files: tuple[str, ...] = ()
    exempt_prefixes: tuple[str, ...] = ()  # results the agent already bounded (its stubs, notices)
    layer_names: Mapping[str, str] = field(default_factory=dict)  # doctor's layer -> the agent's own term
    unit: str = CHARS  # what every budget's `chars` counts: the agent's measure (`doctor.core.agent_measure`)

    def layer_term(self, layer: str) -> str:
        """What this agent calls the layer that bounded a result (doctor's generic name if it has none)."""
        return self.layer_names.get(layer, layer)

    @property
    def threshold(self) -> Budget:
        """The budget of a result whose tool name is not a string (the fallback's)."""
        return self.result_budget("")

    def rule_for(self, name: str) -> ToolRule:
        for rule in self.tools:
            if rule.covers(name):
                return rule
        return self.fallback

    def agent_budget(self, name: str) -> AgentBudget:
        override = self.overrides.get(name)
        if override is not None:
            return AgentBudget(float(override), self.unit, float(override), "override", override_origin(override, name))
        return self.rule_for(name).budget

    def result_budget(self, name: str) -> Budget:
        """The limit a model-history result of tool `name` is held to (see `oversized_above`)."""
        budget = self.agent_budget(name)
        limit = budget.chars + self.allowance if math.isfinite(budget.chars) else math.inf
        return Budget(budget.chars, budget.source, budget.detail, oversized_above=limit)

    def display_budget(self, name: str) -> Budget:
        """A UI copy's budget: the same tool's (the agent's UI keeps what its tool returned)."""
        return self.result_budget(name)

    def to_json(self) -> dict:
        return {
            "client": self.client,
            "clientVersion": self.version,
            "agent": self.agent,
            "rule": self.rule,
            "allowanceChars": self.allowance,
            "tools": [{"tools": rule.label, **rule.budget.to_json()} for rule in (*self.tools, self.fallback)],
            "settings": [{"name": name, **budget.to_json()} for name, budget in self.settings],
            "overrides": {name: (None if not math.isfinite(v) else float(v)) for name, v in self.overrides.items()},
            "overrideOrigins": {name: override_origin(v, name) for name, v in self.overrides.items()},
            "files": list(self.files),
            "layers": dict(self.layer_names),
            "unit": self.unit,
        }


def positive_int(value: object) -> int | None:
    """An env or settings value as the clients read it: a positive integer, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    else:
        return None
    return number if number > 0 else None
