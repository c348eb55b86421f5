"""The Claude Code, Gemini CLI and Codex what-if recordings, opened for a replay.

tests/recordings/<agent>/whatif/<variant>/ each hold one scripted session the real client recorded under
one setting of its main limit (record.py of that client; README.md beside them). All variants of an agent
ran in the same cwd and HOME with the same call ids, so a result of one is the same call in every other,
and `received.json` says what the scripted model was sent there (its UTF-16 length and head).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from doctor.assemble import ReportOptions
from doctor.sources.registry import open_session
from doctor.whatif import replay

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
SESSION_FILES = {"claude": "home/.claude/projects/*/*.jsonl", "gemini": "home/.gemini/tmp/*/chats/*.jsonl",
                 "codex": "home/.codex/sessions/*/*/*/*.jsonl"}
VARIANTS = {
    "claude": ("default", "bash-10000", "bash-50000", "bash-128000", "read-back-100000"),
    "gemini": ("default", "threshold-10000", "threshold-60000", "threshold-150000"),
    "codex": ("default", "limit-1000", "limit-12000", "limit-50000"),
    "codex-catalog": ("catalog-default", "catalog-limit-12000"),
    "claude-cyrillic": ("default", "read-back-100000"),
}
# A family of recordings kept apart from its agent's main one: (agent, folder under tests/recordings/<agent>/).
FAMILIES = {"codex-catalog": ("codex", "whatif"), "claude-cyrillic": ("claude", "whatif-cyrillic")}
# The keys a variant's own settings set, as `--set` takes them (the rest: as if not set).
KEYS = {"claude": ("bashOutputMaxChars", "BASH_MAX_OUTPUT_LENGTH"), "gemini": ("tools.truncateToolOutputThreshold",),
        "codex": ("tool_output_token_limit",)}


@dataclass(frozen=True)
class Recording:
    agent: str
    variant: str
    folder: Path

    @property
    def session_file(self) -> Path:
        (found,) = self.folder.glob(SESSION_FILES[self.agent])
        return found

    @property
    def options(self) -> ReportOptions:
        return ReportOptions(env={"HOME": str(self.folder / "home")})

    def open(self):
        return open_session(self.session_file)

    def received(self, call_id: str) -> dict:
        """What the model was last sent for this call (Gemini's requests carry the id after `<tool>__`)."""
        results = json.loads((self.folder / "received.json").read_text())["results"]
        return results.get(call_id) or results[call_id.split("__", 1)[-1]]

    def files_text(self) -> str:
        """Everything the recording keeps (session file and spill files), as one text."""
        return "\n".join(path.read_text(encoding="utf-8", errors="replace")
                         for path in sorted((self.folder / "home").rglob("*")) if path.is_file())


def recording(agent: str, variant: str) -> Recording:
    folder, family = FAMILIES.get(agent, (agent, "whatif"))
    return Recording(folder, variant, RECORDINGS / folder / family / variant)


@cache
def prepared(agent: str, variant: str) -> replay.Prepared:
    rec = recording(agent, variant)
    return replay.prepare(rec.open(), rec.options)


def settings_of(agent: str, variant: str) -> dict:
    """`--set` that puts a replay under this variant's own settings (`None`: as if the key were not set)."""
    base = prepared(agent, variant).base.values
    return {key: base.get(key) for key in KEYS[recording(agent, variant).agent]}


def pairs(agent: str) -> list[tuple[str, str, str]]:
    return [(agent, a, b) for a in VARIANTS[agent] for b in VARIANTS[agent]]


def full_output(command: str) -> str | None:
    """The text a recorded `fixed_rows` command printed (tests/recordings/recording_kit.py), or None."""
    rows = re.search(r"range\(1, (\d+)\)", command)
    if rows is None:
        return None
    cyrillic = "\\u0436" in command
    word, fill = ("\u0440\u044f\u0434", "\u0436") if cyrillic else ("row", "x")
    return "".join(f"{word} {i:05d} " + fill * 40 + "\n" for i in range(1, int(rows.group(1))))
