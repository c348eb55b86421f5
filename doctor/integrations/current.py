"""Which Gemini CLI session `/doctor:memory` runs in: recorded by doctor's `SessionStart` hook, found again by process.

Gemini CLI tells a custom command's `!{…}` nothing about its session (no id, no variable), and
another session of the same folder may have been written more recently (one still open in another
terminal, or the one before a restart): the folder's newest session file is not the session the
user typed in. Its hooks are told: `session_id` and `transcript_path`. The hook and the command's
shell are both started by the same Gemini CLI process, so the `SessionStart` hook (on startup, on
resume, on `/clear`) records the session under that process, and `doctor slash gemini` looks up the
record of the process that started it. A process is its pid and its start time (a pid is reused);
"the Gemini CLI process" is the nearest ancestor that is not a shell (each runs its command through
one). Records live in doctor's private cache folder (`sessions/`, 0700, files 0600); a record of a
process that is gone is removed when a new one is written. No record: the session cannot be known.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import zlib
from pathlib import Path

from msgspec import Struct

FOLDER = "sessions"
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "busybox"})
MAX_RECORD = 4096
_SESSION_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
_RECORD = re.compile(r"(?P<agent>[a-z]+)-(?P<pid>\d+)-(?P<start>\d+)\.json")


class Recorded(Struct, frozen=True):
    session_id: str
    transcript: Path | None  # None: the hook's path was not a session file in the agent's own folder


def remember(agent: str, payload: dict) -> None:
    """Record the session a `SessionStart` payload names for the agent process that ran this hook."""
    from doctor.safety.private_folders import private_cache_folder

    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        return
    transcript = payload.get("transcript_path")
    owner = agent_process()
    if owner is None:
        return
    folder = private_cache_folder(FOLDER)
    if folder is None:
        return
    with folder:
        _forget_the_gone(folder.descriptor)
        record = {"sessionId": session_id, "transcriptPath": transcript if isinstance(transcript, str) else None}
        folder.write(_name(agent, owner), json.dumps(record).encode())


def recorded(agent: str) -> Recorded | None:
    """The session doctor's hook recorded for the agent process this command runs under; None: not known."""
    from doctor.safety.private_folders import Refused, private_cache_folder

    owner = agent_process()
    if owner is None:
        return None
    folder = private_cache_folder(FOLDER)
    if folder is None:
        return None
    with folder:
        try:
            raw = folder.read(_name(agent, owner), MAX_RECORD)
        except Refused:
            return None
    try:
        record = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("sessionId"), str) \
            or not _SESSION_ID.fullmatch(record["sessionId"]):
        return None
    return Recorded(record["sessionId"], _conversation(agent, record.get("transcriptPath"), record["sessionId"]))


def _conversation(agent: str, path, session_id: str) -> Path | None:
    """The file holding session `session_id`'s conversation, beside `path` (the hook's `transcript_path`).

    Gemini CLI 0.61 resuming a session starts a new file for it (the path its `SessionStart` names, holding
    only the session's opening context) and then writes the conversation on into the session's old file:
    of this session's files in that folder, the largest holds it. Only files written under Gemini's own
    session folder, in its layout, no symlink on the way (`doctor.safety.roots.contained_file`); None when
    there is none yet (a new session before its first prompt is recorded)."""
    from doctor.safety.roots import contained_file, locate, session_roots

    roots = [root for root in session_roots() if root.agent == agent]
    if not isinstance(path, str) or locate(path, roots) is None:
        return None
    best: tuple[int, Path] | None = None
    for candidate in Path(path).parent.glob(f"session-*-{session_id[:8]}.json*"):
        real = contained_file(candidate, roots)
        if real is None or not _opens_session(real, session_id):
            continue
        size = real.stat().st_size
        if best is None or size > best[0]:
            best = (size, candidate)
    return best[1] if best else None


def _opens_session(path: Path, session_id: str) -> bool:
    """Whether the file's first record names `session_id` (its first 4 KiB are enough)."""
    from doctor.safety.reads import Refused, open_regular

    try:
        with os.fdopen(open_regular(path), "rb") as handle:
            head = handle.read(MAX_RECORD).decode("utf-8", "replace")
    except (Refused, OSError):
        return False
    return re.search(rf'"sessionId"\s*:\s*"{re.escape(session_id)}"', head) is not None


def _name(agent: str, process: tuple[int, int]) -> str:
    return f"{agent}-{process[0]}-{process[1]}.json"


def agent_process(pid: int | None = None) -> tuple[int, int] | None:
    """(pid, start time) of the agent process: the nearest ancestor of this process (or `pid` itself) that is
    not a shell. None when a step of the way cannot be read."""
    pid = os.getppid() if pid is None else pid
    for _ in range(16):
        info = _process(pid)
        if info is None:
            return None
        parent, start, name = info
        if name not in SHELLS:
            return pid, start
        pid = parent
    return None


def _process(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, command name) of `pid`, or None when it is gone or cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode("utf-8", "replace")
    except OSError:
        return _process_by_ps(pid)
    name, _, rest = stat[stat.index("(") + 1:].rpartition(")")
    fields = rest.split()
    return int(fields[1]), int(fields[19]), name


def _process_by_ps(pid: int) -> tuple[int, int, str] | None:
    """Where there is no /proc (macOS): `ps` states the parent, the start time and the command."""
    if os.path.isdir("/proc/self"):
        return None  # /proc exists: the process is gone
    try:
        out = subprocess.run(["ps", "-o", "ppid=,lstart=,comm=", "-p", str(pid)], capture_output=True, text=True,
                             timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    if len(out) < 7 or not out[0].isdigit():
        return None
    start = zlib.crc32(" ".join(out[1:6]).encode())  # a number for the stated start time
    return int(out[0]), start, os.path.basename(" ".join(out[6:]))


def _forget_the_gone(descriptor: int) -> None:
    """Remove the records of agent processes that are no longer running (or whose pid was reused)."""
    for name in os.listdir(descriptor):
        match = _RECORD.fullmatch(name)
        if match is None:
            continue
        process = _process(int(match["pid"]))
        if process is None or process[1] != int(match["start"]):
            try:
                os.unlink(name, dir_fd=descriptor)
            except OSError:
                pass
