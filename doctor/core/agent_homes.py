"""Where each agent keeps its data, honouring the variable the agent itself reads.

One answer for both sides that need it: `doctor.sources.discovery` finds sessions
there, and `doctor.core.agent_rules` reads the agent's settings from the same
folder, so the limits doctor applies come from the home the session was found in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

QWEN, CLAUDE, CODEX, GEMINI = "qwen", "claude", "codex", "gemini"


def agent_homes(env: Mapping[str, str] = os.environ) -> dict[str, Path]:
    """Each agent's data directory: `$QWEN_HOME`, `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`, `$GEMINI_CLI_HOME/.gemini`,
    else `~/.qwen`, `~/.claude`, `~/.codex`, `~/.gemini` (`~` = `$HOME`)."""
    home = Path(env.get("HOME") or Path.home())
    gemini_home = Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
    return {
        QWEN: Path(env["QWEN_HOME"]) if env.get("QWEN_HOME") else home / ".qwen",
        CLAUDE: Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude",
        CODEX: Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex",
        GEMINI: gemini_home / ".gemini",
    }
