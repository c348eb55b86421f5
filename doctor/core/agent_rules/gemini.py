"""Gemini CLI 0.61.0's limits on what a tool result may put in the model's context.

Read from the CLI's bundle (`packages/core`; re-extracted by
tests/reference/test_client_budgets.py):
- `run_shell_command` output and a single-text MCP result longer than
  `getTruncateToolOutputThreshold()` are saved to `tool-outputs/` and replaced by
  `Output too large. Showing first H and last T characters. For full output
  see: <file>` with 20 % head and 80 % tail of the threshold. The threshold is
  `tools.truncateToolOutputThreshold` (default 40,000; ≤ 0 disables), capped at
  4 × the tokens left in the context window (doctor cannot know that cap and
  says so). No other tool is truncated by this layer, and 0.61 has no line limit.
- Output masking (`contextManagement.tools.outputMasking`): once more than
  `minPrunableThresholdTokens` (30,000) of older tool output sits beyond the
  newest `protectionThresholdTokens` (50,000), older outputs become
  `<tool_output_masked>` previews. It bounds history later, not a result.
Settings: system defaults, `$GEMINI_CLI_HOME/.gemini/settings.json` (default
`~/.gemini`), `<project>/.gemini/settings.json`, system settings
(`GEMINI_CLI_SYSTEM_SETTINGS_PATH`), merged in that order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from doctor.core.agent_homes import GEMINI, agent_homes
from doctor.core.agent_rules.model import CHARS, TOKENS, AgentBudget, AgentRules, ToolRule
from doctor.core.sentinels import IN_TOOL_TRUNCATION, PERSISTED_STUB, SENTINEL_PREFIXES
from doctor.core.settings import deep_merge, read_settings_file

AGENT = GEMINI
CLIENT = "Gemini CLI"
VERSION = "0.61.0"
DEFAULT = f"built-in default of {CLIENT} {VERSION}"
SHELL_TOOL = "run_shell_command"
TRUNCATE_THRESHOLD = 40_000  # DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD
MASKING_PROTECTION_TOKENS = 50_000  # DEFAULT_TOOL_PROTECTION_THRESHOLD
MASKING_MIN_PRUNABLE_TOKENS = 30_000  # DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD
THRESHOLD_KEY = "tools.truncateToolOutputThreshold"
# Gemini's words for the layers doctor recognises: "Output too large. Showing first … For full output see"
# and the `<tool_output_masked>` preview (doctor's persisted-stub layer, since it points to a saved file).
LAYER_NAMES = {IN_TOOL_TRUNCATION: "truncated to tool-outputs/", PERSISTED_STUB: "masked (output masking)"}
RULE = ("A result is oversized when the model got more than tools.truncateToolOutputThreshold chars "
        "(default 40,000) and Gemini CLI did not truncate or mask it; shell and MCP output are truncated "
        "at that threshold, other tools have no limit of their own and are held to the same number.")


def settings_files(project_dir: Path | None, env: Mapping[str, str]) -> list[Path]:
    system = Path(env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json")
    files = [system.with_name("system-defaults.json"), agent_homes(env)[GEMINI] / "settings.json"]
    if project_dir is not None:
        files.append(project_dir / ".gemini" / "settings.json")
    return [*files, system]


def is_mcp_tool(name: str) -> bool:
    """MCP tools are registered as `<server>_<tool>` or `mcp_<server>_<tool>`: doctor knows them by the prefix."""
    return name.startswith("mcp_")


def load(project_dir: Path | None, env: Mapping[str, str], extra_files: tuple[Path, ...] = (),
         overrides: Mapping[str, float] | None = None, use_default_files: bool = True,
         threshold: float | None = None) -> AgentRules:
    merged: dict = {}
    used: list[str] = []
    where = None
    for path in (settings_files(project_dir, env) if use_default_files else []) + list(extra_files):
        if not path.is_file():
            continue
        data = read_settings_file(path)
        tools = data.get("tools")
        if isinstance(tools, Mapping) and "truncateToolOutputThreshold" in tools:
            where = str(path)
        merged = deep_merge(merged, data)
        used.append(str(path))
    tools = merged.get("tools") if isinstance(merged.get("tools"), Mapping) else {}
    raw = tools.get("truncateToolOutputThreshold")
    if threshold is not None:
        budget = _threshold(threshold, "override", "--threshold")
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        budget = _threshold(raw, "settings", f"{THRESHOLD_KEY} in {where}")
    else:
        budget = _threshold(TRUNCATE_THRESHOLD, "default", f"{DEFAULT}: {THRESHOLD_KEY}")
    others = AgentBudget(budget.value, CHARS, budget.chars, budget.source,
                         f"{CLIENT} cuts none of their output; held to {THRESHOLD_KEY} ({budget.detail})",
                         own=False)
    masking = merged.get("contextManagement", {}).get("tools", {}).get("outputMasking", {}) \
        if isinstance(merged.get("contextManagement"), Mapping) else {}
    masking = masking if isinstance(masking, Mapping) else {}
    extras = tuple(
        (f"output masking {key}", _tokens(masking.get(key), default, key))
        for key, default in (("protectionThresholdTokens", MASKING_PROTECTION_TOKENS),
                             ("minPrunableThresholdTokens", MASKING_MIN_PRUNABLE_TOKENS)))
    tools_rules = (ToolRule(SHELL_TOOL, budget, frozenset({SHELL_TOOL})),
                   ToolRule("MCP tools (mcp_*)", budget, matches=is_mcp_tool))
    return AgentRules(AGENT, CLIENT, VERSION, tools_rules, ToolRule("other tools", others), RULE, 0,
                      dict(overrides or {}), extras, tuple(used), exempt_prefixes=SENTINEL_PREFIXES,
                      layer_names=LAYER_NAMES)


def _threshold(value: float, source: str, detail: str) -> AgentBudget:
    chars = math.inf if value <= 0 else value
    return AgentBudget(chars, CHARS, chars, source, detail + ("; ≤ 0 disables truncation" if value <= 0 else ""))


def _tokens(value: object, default: int, key: str) -> AgentBudget:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return AgentBudget(value, TOKENS, value * 4, "settings",
                           f"contextManagement.tools.outputMasking.{key}", "chars ÷ 4")
    return AgentBudget(default, TOKENS, default * 4, "default", DEFAULT, "chars ÷ 4")
