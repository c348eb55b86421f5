"""The fixed folders each agent writes its spilled outputs and its sessions under, and the layouts it uses there.

A path a model or a session hands doctor proves nothing about where it lives: `<clone>/tmp/<64 hex>`
may be a symlink a repository committed, `/tmp/<64 hex>` one another user planted. So the roots
come from the agents' own homes (`doctor.core.agent_homes`, the variables each agent reads) and
from the folders the user names (`--spill-root`), resolved once when a command starts, and a
path is served only if it is written under one of them, in the layout that agent itself writes:

- Qwen Code, `<QWEN_RUNTIME_DIR or QWEN_HOME or ~/.qwen>/tmp/<sha256 of the project>/`:
  `<tool>_<12 hex>.output` (truncated output), `tool-results/<call id>.txt` (persisted or
  batch-offloaded output), `background-shells/<session id>/shell-bg_<8 hex>.output`;
- Claude Code, `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<project>/<session id>/tool-results/<name>`;
- Gemini CLI, `<GEMINI_CLI_HOME or ~>/.gemini/tmp/<project>/`: `tool-outputs/session-<id>/<name>.txt`,
  `tool-outputs/<name>.txt`, and the older `<call id>.output`;
- Codex writes no spill files.
So the agent's `shell_history`, `logs.json`, checkpoints and chats beside its spill files are
never spill files. A folder the user names holds copies in any layout: every regular file under
it is served (the user chose the folder). Sessions have their own roots (`session_roots`).

`locate` decides on the written path alone (no file is touched); `contained_file` also walks to
the file (`doctor.safety.reads`): no symlink anywhere on the way, a regular file, folders only
the user or root can write. What it returns is the real path, for opening with `open_contained`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from doctor.core.agent_homes import CLAUDE, CODEX, GEMINI, QWEN, agent_homes
from doctor.safety.reads import Refused, open_beneath, stat_beneath

USER = "user"  # a root the user named (`--spill-root`): any layout

_NAME = r"[^/.][^/]*"  # one path component, not hidden (no `.`/`..`, no dotfile)
_SESSION_ID = r"[0-9a-fA-F-]{36}"

QWEN_SPILLS = (
    re.compile(rf"[0-9a-f]{{64}}/{_NAME}_[0-9a-f]{{12}}\.output"),
    re.compile(rf"[0-9a-f]{{64}}/tool-results/{_NAME}\.txt"),
    re.compile(rf"[0-9a-f]{{64}}/background-shells/{_NAME}/shell-bg_[0-9a-f]{{8}}\.output"),
)
CLAUDE_SPILLS = (re.compile(rf"{_NAME}/{_SESSION_ID}/tool-results/{_NAME}"),)
GEMINI_SPILLS = (
    re.compile(rf"{_NAME}/tool-outputs/session-{_NAME}/{_NAME}\.txt"),
    re.compile(rf"{_NAME}/tool-outputs/{_NAME}\.txt"),
    re.compile(rf"{_NAME}/{_NAME}\.output"),
)

QWEN_SESSIONS = (re.compile(rf"{_NAME}/chats/{_NAME}\.jsonl"),)
CLAUDE_SESSIONS = (re.compile(rf"{_NAME}/{_NAME}\.jsonl"),
                   re.compile(rf"{_NAME}/{_SESSION_ID}/subagents/{_NAME}\.jsonl"))
CODEX_SESSIONS = (re.compile(rf"\d{{4}}/\d\d/\d\d/rollout-{_NAME}\.jsonl"),)
CODEX_ARCHIVED = (re.compile(rf"rollout-{_NAME}\.jsonl"),)
GEMINI_SESSIONS = (re.compile(rf"{_NAME}/chats/session-{_NAME}\.jsonl?"),
                   re.compile(rf"{_NAME}/chats/{_NAME}/{_NAME}\.jsonl?"))  # a subagent's, in its parent's folder


@dataclass(frozen=True, slots=True)
class Root:
    """A folder an agent writes under, resolved once.

    `real` is its real path (no symlink left in it), `names` the absolute forms a caller may
    write it in (as configured, and real); `layouts` the relative paths the agent writes there,
    None for a folder the user named (any file)."""

    agent: str
    real: Path
    names: tuple[str, ...]
    layouts: tuple[re.Pattern[str], ...] | None

    def accepts(self, relative: str) -> bool:
        return self.layouts is None or any(layout.fullmatch(relative) for layout in self.layouts)


@dataclass(frozen=True, slots=True)
class Located:
    """A path written under a root in a layout the root accepts: where it really is, as names from `/`."""

    root: Root
    relative: str

    @property
    def parts(self) -> tuple[str, ...]:
        return (*self.root.real.parts[1:], *self.relative.split("/"))

    @property
    def path(self) -> Path:
        return self.root.real / self.relative


def root(agent: str, configured: str | os.PathLike[str], layouts: tuple[re.Pattern[str], ...] | None) -> Root:
    """A root from a configured folder: made absolute and resolved now, once."""
    absolute = os.path.abspath(configured)
    real = os.path.realpath(absolute)
    return Root(agent, Path(real), tuple(dict.fromkeys((absolute, real))), layouts)


def spill_roots(env: Mapping[str, str] = os.environ, extra: Iterable[str | os.PathLike[str]] = ()) -> tuple[Root, ...]:
    """Where the agents write spilled outputs (from their homes in `env`), then the folders the user named."""
    homes = agent_homes(env)
    roots = [root(QWEN, base / "tmp", QWEN_SPILLS) for base in _qwen_bases(env, homes[QWEN])]
    roots.append(root(CLAUDE, homes[CLAUDE] / "projects", CLAUDE_SPILLS))
    roots.append(root(GEMINI, homes[GEMINI] / "tmp", GEMINI_SPILLS))
    roots.extend(root(USER, folder, None) for folder in extra)
    return _distinct(roots)


def session_roots(env: Mapping[str, str] = os.environ) -> tuple[Root, ...]:
    """Where the agents keep their session files (`doctor.sources.discovery` lists them from the same homes)."""
    homes = agent_homes(env)
    roots = [root(QWEN, base / "projects", QWEN_SESSIONS) for base in _qwen_bases(env, homes[QWEN])]
    roots.append(root(CLAUDE, homes[CLAUDE] / "projects", CLAUDE_SESSIONS))
    roots.append(root(CODEX, homes[CODEX] / "sessions", CODEX_SESSIONS))
    roots.append(root(CODEX, homes[CODEX] / "archived_sessions", CODEX_ARCHIVED))
    roots.append(root(GEMINI, homes[GEMINI] / "tmp", GEMINI_SESSIONS))
    return _distinct(roots)


def _qwen_bases(env: Mapping[str, str], home: Path) -> list[Path]:
    """Qwen writes `tmp/` and `projects/` under `QWEN_RUNTIME_DIR` when it is set, else under its home."""
    runtime = env.get("QWEN_RUNTIME_DIR")
    return [Path(runtime), home] if runtime and os.path.isabs(runtime) else [home]


def _distinct(roots: list[Root]) -> tuple[Root, ...]:
    return tuple({(r.real, r.layouts): r for r in roots}.values())


def locate(path: str | os.PathLike[str], roots: Iterable[Root]) -> Located | None:
    """The root `path` is written under, in a layout that root accepts; None otherwise. Touches no file.

    A path with a `..` component is never located (the folder before it may be a symlink, so
    its lexical meaning is not its real one); a relative path is taken from the working folder.
    """
    text = os.fspath(path)
    if not text or "\0" in text or ".." in text.split("/"):
        return None
    absolute = os.path.abspath(text)
    for candidate in roots:
        for name in candidate.names:
            prefix = name.rstrip("/") + "/"
            if absolute.startswith(prefix) and candidate.accepts(absolute[len(prefix):]):
                return Located(candidate, absolute[len(prefix):])
    return None


def contained_file(path: str | os.PathLike[str], roots: Iterable[Root]) -> Path | None:
    """The real path of `path` if it is an agent's file under one of `roots` (see `locate`) that
    `doctor.safety.reads` would open: no symlink on the way, a regular file; None otherwise."""
    located = locate(path, roots)
    if located is None:
        return None
    try:
        stat_beneath(located.parts)
    except (Refused, OSError):
        return None
    return located.path


def open_contained(located: Located) -> int:
    """A read-only descriptor on a located file, reached without following any symlink (see
    `doctor.safety.reads.open_beneath`); raises Refused or OSError."""
    return open_beneath(located.parts)
