"""The context window a status-line payload stated, kept for the summary `/doctor:memory` prints later.

Claude Code and Qwen Code tell only their status-line command the window's size; `/doctor:memory`
runs elsewhere (a custom command). So `doctor statusline` leaves the number beside its index, in
doctor's own cache folder (0700): `<index name>.window`, a few bytes of JSON `{"tokens": N}`, written
only when it changed (mode 0600, a temporary file renamed over it). Reading trusts a file only when
this user owns it, nobody else can write it, it is a regular file (not followed through a symlink)
and it holds a believable number; anything else reads as "not known".
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from doctor.core.context_window import STATUS_LINE, ContextWindow, window_tokens
from doctor.statusline.cache import index_file

MAX_BYTES = 256


def _note(agent: str, transcript: Path) -> Path:
    """Beside the transcript's index, named from its resolved path (the status line and the slash
    command may name the same file differently)."""
    try:
        transcript = transcript.resolve()
    except (OSError, RuntimeError):
        pass
    return index_file(agent, transcript).with_suffix(".window")


def recall(agent: str, transcript: Path) -> ContextWindow | None:
    """The window the agent's status line last stated for `transcript`, or None."""
    if agent not in STATUS_LINE:
        return None
    try:
        descriptor = os.open(_note(agent, transcript), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None
        data = os.read(descriptor, MAX_BYTES + 1)
    finally:
        os.close(descriptor)
    try:
        value = json.loads(data) if len(data) <= MAX_BYTES else None
    except ValueError:
        return None
    tokens = window_tokens(value.get("tokens")) if isinstance(value, dict) else None
    return ContextWindow(tokens, STATUS_LINE[agent]) if tokens is not None else None


def remember(agent: str, transcript: Path, window: ContextWindow) -> None:
    """Keep `window` for `transcript` (nothing is written when the note already says so)."""
    known = recall(agent, transcript)
    if known is not None and known.tokens == window.tokens:
        return
    where = _note(agent, transcript)
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = where.with_name(f".{where.name}.{os.getpid()}.{os.urandom(4).hex()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"tokens": window.tokens}))
        os.replace(temporary, where)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
