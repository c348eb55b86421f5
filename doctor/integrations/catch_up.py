"""Wait until an agent's transcript holds the MCP call that asks about it, so the answer counts every result
the model was already given.

Claude Code 2.1.332 writes its transcript a moment after it hands the model a tool result: a
`memory_report` right after a big Bash output saw none of it, and later calls lagged one result
behind. Its `tools/call` names the call in `_meta["claudecode/toolUseId"]`, and it appends records in
order: once the assistant message holding that call is in the file, every result given to the model
before it is too. So before reading the session, doctor waits for that id to appear, at most
`LIMIT` seconds, reading only what was appended since it last looked. Other agents name no call and
are current already: no wait.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

LIMIT = 10.0  # seconds
POLL = 0.05
CALL_ID_KEY = "claudecode/toolUseId"
_CALL_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_CHUNK = 1 << 20


def call_id(meta: Mapping | None) -> str | None:
    """The id of the tool call asking (Claude Code's `_meta`), when it is a plausible one."""
    value = meta.get(CALL_ID_KEY) if isinstance(meta, Mapping) else None
    return value if isinstance(value, str) and _CALL_ID.fullmatch(value) else None


def wait_for_call(path: Path, call: str | None, limit: float = LIMIT) -> bool:
    """Return once `path` holds `call`'s id (True), or after `limit` seconds (False; the answer then says
    what the file holds). No id: at once (True)."""
    if call is None:
        return True
    needle = f'"{call}"'.encode()
    deadline = time.monotonic() + limit
    offset = 0
    while True:
        found, offset = _scan(path, needle, offset)
        if found:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)


def _scan(path: Path, needle: bytes, offset: int) -> tuple[bool, int]:
    """Whether the bytes appended from `offset` on hold `needle`, and where to look from next time."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False, offset
    try:
        size = os.fstat(descriptor).st_size
        start = max(0, min(offset, size) - len(needle))  # a needle cut by the last look's end
        while start < size:
            data = os.pread(descriptor, _CHUNK + len(needle), start)
            if not data:
                break
            if needle in data:
                return True, size
            start += _CHUNK
        return False, size
    finally:
        os.close(descriptor)
