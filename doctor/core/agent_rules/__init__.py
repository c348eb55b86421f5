"""Each agent's own limits on tool results, per client version, with their sources.

`rules_for` builds the table for a session's agent from the places that agent
reads (its settings files, environment, config); `doctor.core.budgets` keeps
Qwen Code's, which the analysis uses for Qwen sessions and under `--budgets qwen`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from doctor.core.agent_rules.model import AgentRules

# Each agent's module is imported only for a session of that agent (Codex's reads TOML: tomllib).
AGENTS = ("claude", "gemini", "codex")


def rules_for(agent: str, *, project_dir: Path | None, env: Mapping[str, str], model: str | None = None,
              extra_files: tuple[Path, ...] = (), overrides: Mapping[str, float] | None = None,
              use_default_files: bool = True, threshold: float | None = None) -> AgentRules | None:
    """The agent's rules, or None for an agent doctor judges by Qwen's (Qwen itself, dumps, live hosts)."""
    if agent not in AGENTS:
        return None
    module = importlib.import_module(f"doctor.core.agent_rules.{agent}")
    if agent == "claude":
        return module.load(project_dir, env, extra_files, overrides, use_default_files)
    if agent == "gemini":
        return module.load(project_dir, env, extra_files, overrides, use_default_files, threshold)
    return module.load(model, env, extra_files, overrides, use_default_files)
