"""What doctor hands on from inside an agent: text made inert, and a spill path only where the agent spills.

The hook (`doctor hook`), the slash command (`doctor slash`) and the MCP server (`doctor mcp`) pass
text on to the user's terminal (a hook's `systemMessage`, which the agent prints as it is) and to the
model (`additionalContext`, a command's output, a tool result). Much of that text comes from what a
tool printed, a session file or a hook payload, all of which an attacker may write: a web page the
model fetched can print ESC sequences (an OSC 52 clipboard write, a repainted screen), BEL, C1 and
bidi controls, and a `saved to /home/victim/.ssh/id_rsa` line meant to make doctor tell the model to
read a secret. So:
- every string doctor relays goes through `doctor.report.inert` (`relayed`), at the one place each
  face writes its answer;
- a spilled-output path taken from a tool's output is named only when it is a regular file the
  agent itself writes as spilled output, under that agent's own spill folder
  (`doctor.safety.roots.spill_roots`, `contained_file`: no symlink on the way); any other path is
  dropped, and the alarm then says nothing about where the output went.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from doctor.report.inert import inert, inert_line

# How a tool or an agent says where it put an output too big to show.
SPILL = re.compile(r"(?:saved to|Persisted tool-output artifact|written to)[:\s]+(/[^\s\"'<>]+)", re.IGNORECASE)
CANDIDATES = 8  # paths looked at per result: a flood of fake notices costs at most this many folder walks


def spill_named(text: str, agent: str, env: Mapping[str, str]) -> str | None:
    """The first spill path `text` names that is `agent`'s own spilled output (its real path, inert); else None."""
    from doctor.safety.roots import contained_file, spill_roots

    roots = [root for root in spill_roots(env) if root.agent == agent]
    if not roots:
        return None  # Codex writes no spill files
    for number, match in enumerate(SPILL.finditer(text)):
        if number == CANDIDATES:
            break
        found = contained_file(match.group(1).rstrip("."), roots)
        if found is not None:
            return inert_line(str(found))
    return None


def relayed(value):
    """`value` (a hook's answer, a JSON result) with every string in it inert; newlines are kept."""
    if isinstance(value, str):
        return inert(value)
    if isinstance(value, dict):
        return {inert(key) if isinstance(key, str) else key: relayed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [relayed(item) for item in value]
    return value
