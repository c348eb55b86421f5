"""AutoBot spill anchors: find them in tool result text and name their artifact files.

AutoBot (mrveiss/AutoBot-AI, `agent_loop/tool_output_spill.py`) replaces an
oversized tool result with an excerpt and an anchor
`autobot:spill:<task_id>:<tool>:<sha256(tool:payload)[:16]>`, and writes the
full output to `<root>/<h[:2]>/<h>.json` where `h = sha256(anchor)`: the path
is a hash of the anchor, never the anchor's own text, so a hostile tool name
cannot point outside the root. Everything here is pure (no file access)
except `existing_artifact`, which only stats.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT_ENV = "AUTOBOT_TOOL_OUTPUT_SPILL_ROOT"
DEFAULT_ROOT = Path("data") / "tool_output_spill"

# The task id may itself hold ':' (greedy, then backtrack to the last `:tool:digest`);
# quotes end an anchor because the note quotes it (`anchor 'autobot:spill:…'`) and JSON does too.
ANCHOR_PREFIX = "autobot:spill:"  # every anchor holds it: text without it holds none (spill.pointers skips it)
_ANCHOR = re.compile(re.escape(ANCHOR_PREFIX) + r"([^\s'\"]+):([^\s:'\"]+):([0-9a-f]{16})(?![0-9A-Za-z])")


@dataclass(frozen=True, slots=True)
class Anchor:
    """One anchor as it appears in the text, split into its fields."""

    text: str
    task_id: str
    tool: str
    digest: str
    offset: int

    @property
    def artifact_name(self) -> str:
        """`<h[:2]>/<h>.json`, relative to a spill root."""
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()
        return f"{digest[:2]}/{digest}.json"


def find_anchors(text: str) -> list[Anchor]:
    """Every anchor in `text`, in order of appearance (repeats included)."""
    return [
        Anchor(match.group(0), match.group(1), match.group(2), match.group(3), match.start())
        for match in _ANCHOR.finditer(text)
    ]


def artifact_candidates(anchor: Anchor, roots: Iterable[Path]) -> list[Path]:
    """Where the artifact for `anchor` would be under each root, in root order."""
    return [Path(root) / anchor.artifact_name for root in roots]


def artifact_path(anchor: Anchor, roots: Iterable[Path]) -> Path | None:
    """The first candidate that exists as a file, or None when the artifact is missing."""
    return next((path for path in artifact_candidates(anchor, roots) if path.is_file()), None)


def default_roots(env: Mapping[str, str] = os.environ, base: Path | None = None) -> list[Path]:
    """AutoBot's spill root: `$AUTOBOT_TOOL_OUTPUT_SPILL_ROOT`, else `data/tool_output_spill`.

    The default is relative to AutoBot's working directory, which a reader does
    not know; `base` (e.g. the directory of the dump) stands in for it.
    """
    configured = env.get(ROOT_ENV)
    if configured:
        return [Path(configured)]
    return [Path(base) / DEFAULT_ROOT if base is not None else DEFAULT_ROOT]
