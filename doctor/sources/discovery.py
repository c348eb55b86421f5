"""Find the session files of every agent on this machine, newest first.

Each agent keeps its sessions under a home directory it lets the user move:
Qwen `$QWEN_HOME` (~/.qwen) `/projects/<cwd, every non-alphanumeric char → '-'>/chats/*.jsonl`,
Claude `$CLAUDE_CONFIG_DIR` (~/.claude) `/projects/<same escaping>/*.jsonl`,
Codex `$CODEX_HOME` (~/.codex) `/sessions/YYYY/MM/DD/rollout-*.jsonl`,
Gemini `$GEMINI_CLI_HOME/.gemini` (~/.gemini) `/tmp/<project slug or sha256>/chats/session-*.json[l]`.
Listing only stats files and reads the first records (at most HEAD_BYTES): the start
time is the session's first timestamp, in UTC (`…Z`) for every agent, and the project
comes from the directory when it encodes it, else from the first records' cwd. A file
whose first records say no time falls back to the time in its name, then its mtime.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from doctor.core.agent_homes import CLAUDE, CODEX, GEMINI, QWEN, agent_homes
from doctor.sources.jsonl import loads

AGENTS = (QWEN, CLAUDE, CODEX, GEMINI)
HEAD_BYTES = 256 * 1024  # a Codex session_meta line is ~22 KB; never read more than this
HEAD_LINES = 16

_CODEX_NAME = re.compile(r"rollout-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-(.+)\.jsonl$")
_GEMINI_NAME = re.compile(r"session-(\d{4}-\d\d-\d\dT\d\d-\d\d)-([0-9A-Za-z]+)\.jsonl?$")
# A legacy Gemini session is one pretty-printed JSON object: its top-level "startTime" is on a line of its own.
_PRETTY_START = re.compile(rb'^\s*"startTime"\s*:\s*"([^"]+)"\s*,?\s*$')
TIMESTAMP, START_TIME, CWD = ("timestamp",), ("startTime",), ("cwd",)


@dataclass(frozen=True, slots=True)
class SessionRef:
    """One session file, as far as its location and a stat tell."""

    agent: str
    project: str | None  # the working directory the agent ran in, when known
    id: str
    path: Path
    started: str | None  # UTC ISO-8601 to the second (`2026-12-02T11:51:32Z`), from the first record
    size: int
    mtime: float


def sanitize_cwd(cwd: str | os.PathLike) -> str:
    """Qwen's and Claude's project directory name: every char outside [A-Za-z0-9] becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))



def find_sessions(agent: str | None = None, project: str | os.PathLike | None = None,
                  env: Mapping[str, str] = os.environ) -> list[SessionRef]:
    """Sessions of `agent` (default: all) for `project` (default: any), newest first."""
    homes = agent_homes(env)
    project_path = str(Path(project).resolve()) if project is not None else None
    refs: list[SessionRef] = []
    for name in (agent,) if agent else AGENTS:
        refs.extend(_FINDERS[name](homes[name], project_path))
    refs.sort(key=lambda ref: ref.mtime, reverse=True)
    return refs


def newest_for_cwd(cwd: str | os.PathLike | None = None, env: Mapping[str, str] = os.environ) -> SessionRef | None:
    """The most recently written session of any agent that ran in `cwd` (default: here)."""
    refs = find_sessions(project=cwd if cwd is not None else os.getcwd(), env=env)
    return refs[0] if refs else None


def _stat_ref(agent: str, path: Path, session_id: str, project: str | None, started: str | None) -> SessionRef | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return SessionRef(agent, project, session_id, path, _utc(started) or _iso(stat.st_mtime), stat.st_size,
                      stat.st_mtime)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _utc(text: str | None) -> str | None:
    """ISO text as UTC to the second with `Z`; a time without a zone is this machine's local time."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return _iso(moment.timestamp())  # naive datetimes are local time to .timestamp()


def _files(directory: Path, pattern: str) -> list[Path]:
    try:
        return sorted(path for path in directory.glob(pattern) if path.is_file())
    except OSError:
        return []


def _project_dirs(root: Path, project: str | None) -> list[Path]:
    """`<root>/<escaped cwd>` dirs: just the one for `project`, or all of them."""
    if project is not None:
        return [root / sanitize_cwd(project)]
    try:
        return sorted(path for path in root.iterdir() if path.is_dir())
    except OSError:
        return []


def _qwen(home: Path, project: str | None) -> Iterator[SessionRef]:
    return _per_project(QWEN, home, project, "chats")


def _claude(home: Path, project: str | None) -> Iterator[SessionRef]:
    return _per_project(CLAUDE, home, project, "")


def _per_project(agent: str, home: Path, project: str | None, chats: str) -> Iterator[SessionRef]:
    """`<home>/projects/<escaped cwd>/<chats>/<session id>.jsonl`, the layout Qwen and Claude share."""
    for directory in _project_dirs(home / "projects", project):
        for path in _files(directory / chats, "*.jsonl"):
            head = _head_fields(path, (CWD, TIMESTAMP))
            ref = _stat_ref(agent, path, path.stem, project or head.get(CWD), head.get(TIMESTAMP))
            if ref:
                yield ref


def _codex(home: Path, project: str | None) -> Iterator[SessionRef]:
    for path in _files(home / "sessions", "**/rollout-*.jsonl"):
        match = _CODEX_NAME.search(path.name)
        head = _head_fields(path, (("payload", "cwd"), CWD, TIMESTAMP))
        cwd = head.get(("payload", "cwd")) or head.get(CWD)
        if project is not None and cwd != project:
            continue
        started = head.get(TIMESTAMP) or (_name_time(match.group(1), "%Y-%m-%dT%H-%M-%S") if match else None)
        ref = _stat_ref(CODEX, path, match.group(2) if match else path.stem, cwd, started)
        if ref:
            yield ref


def _gemini(home: Path, project: str | None) -> Iterator[SessionRef]:
    temp = home / "tmp"
    directories = [temp / name for name in _gemini_ids(home, project)] if project else _project_dirs(temp, None)
    owners = _gemini_owners(home)
    for directory in directories:
        for path in _files(directory / "chats", "session-*.json*"):
            match = _GEMINI_NAME.search(path.name)
            if not match:  # `.tmp-<pid>` and `.unreadable-<ts>` leftovers
                continue
            head = _head_fields(path, (("sessionId",), START_TIME))
            started = head.get(START_TIME) or _name_time(match.group(1), "%Y-%m-%dT%H-%M")
            session_id = head.get(("sessionId",)) or match.group(2)  # JSONL metadata line; legacy: name
            ref = _stat_ref(GEMINI, path, session_id, project or owners.get(directory.name), started)
            if ref:
                yield ref


def _gemini_ids(home: Path, project: str) -> list[str]:
    """A project's temp dir names: its registered slug (0.2x+) and the older sha256 of the path."""
    ids = [hashlib.sha256(project.encode("utf-8")).hexdigest()]
    slug = _gemini_registry(home).get(project)
    return [slug] + ids if isinstance(slug, str) else ids


def _gemini_owners(home: Path) -> dict[str, str]:
    """slug → project path, from `projects.json`."""
    return {slug: root for root, slug in _gemini_registry(home).items() if isinstance(slug, str)}


def _gemini_registry(home: Path) -> dict:
    try:
        projects = loads((home / "projects.json").read_bytes()).get("projects")
    except (OSError, ValueError, AttributeError):
        return {}
    return projects if isinstance(projects, dict) else {}


def _name_time(text: str, pattern: str) -> str | None:
    """The local time a file name encodes, as ISO text (the agents name files in local time)."""
    try:
        return datetime.strptime(text, pattern).isoformat()
    except ValueError:
        return None


def _head_fields(path: Path, wanted: tuple[tuple[str, ...], ...], lines: int = HEAD_LINES) -> dict:
    """{key path: string value} of the first records that have each, reading at most HEAD_BYTES.

    Claude files open with records that carry no cwd (queue operations,
    attachments), so a few lines are tried, never the whole file. A legacy Gemini
    file is one pretty-printed object: its "startTime" line is read as such.
    """
    found: dict = {}
    budget = HEAD_BYTES
    try:
        with open(path, "rb") as handle:
            for _ in range(lines):
                line = handle.readline(budget)
                budget -= len(line)
                if not line or budget <= 0:
                    break
                for keys in wanted:
                    if keys not in found:
                        value = _dig(line, keys)
                        pretty = _PRETTY_START.match(line) if keys == START_TIME and value is None else None
                        value = value if pretty is None else pretty.group(1).decode("utf-8", "replace")
                        if value is not None:
                            found[keys] = value
                if len(found) == len(wanted):
                    break
    except OSError:
        pass
    return found


def _dig(line: bytes, keys: tuple[str, ...]) -> str | None:
    try:
        value = loads(line)
    except ValueError:
        return None
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else None


_FINDERS: dict[str, Callable[[Path, str | None], Iterator[SessionRef]]] = {
    QWEN: _qwen, CLAUDE: _claude, CODEX: _codex, GEMINI: _gemini,
}
