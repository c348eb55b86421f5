"""The context window a status-line payload stated, kept for the summary `/doctor:memory` prints later.

Claude Code and Qwen Code tell only their status-line command the window's size; `/doctor:memory`
runs elsewhere (a custom command). So `doctor statusline` leaves the number beside its index, in
doctor's private cache folder (`safety.private_folders`: the user's, 0700, no symlink on the way):
`<index name>.window`, a few bytes of JSON `{"tokens": N}`, written only when it changed (0600, a
temporary file renamed over it). Reading trusts a file only when this user owns it, nobody else can
write it, it is a regular file (not followed through a symlink) and it holds a believable number;
anything else reads as "not known".
"""

from __future__ import annotations

import json
from pathlib import Path

from doctor.core.context_window import STATUS_LINE, ContextWindow, window_tokens
from doctor.safety.private_folders import PrivateFolder, private_cache_folder
from doctor.statusline.cache import FOLDER, index_name

MAX_BYTES = 256


def _note(agent: str, transcript: Path) -> str:
    """Beside the transcript's index, named from its resolved path (the status line and the slash
    command may name the same file differently)."""
    try:
        transcript = transcript.resolve()
    except (OSError, RuntimeError):
        pass
    return str(Path(index_name(agent, transcript)).with_suffix(".window"))


def recall(agent: str, transcript: Path) -> ContextWindow | None:
    """The window the agent's status line last stated for `transcript`, or None."""
    if agent not in STATUS_LINE:
        return None
    folder = private_cache_folder(FOLDER)
    if folder is None:
        return None
    with folder:
        return _recalled(folder, agent, transcript)


def _recalled(folder: PrivateFolder, agent: str, transcript: Path) -> ContextWindow | None:
    try:
        data = folder.read(_note(agent, transcript), MAX_BYTES)
        value = json.loads(data) if data is not None else None
    except (OSError, ValueError):
        return None
    tokens = window_tokens(value.get("tokens")) if isinstance(value, dict) else None
    return ContextWindow(tokens, STATUS_LINE[agent]) if tokens is not None else None


def remember(agent: str, transcript: Path, window: ContextWindow) -> None:
    """Keep `window` for `transcript` (nothing is written when the note already says so)."""
    folder = private_cache_folder(FOLDER)
    if folder is None:
        return
    with folder:
        known = _recalled(folder, agent, transcript)
        if known is None or known.tokens != window.tokens:
            folder.write(_note(agent, transcript), json.dumps({"tokens": window.tokens}).encode())
