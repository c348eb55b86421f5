"""Format sniffing: which reader opens a given file.

Each reader module exposes `NAME` (agent/format name), `sniff(path, head) -> bool`
(cheap: looks at the first bytes only) and `read(path) -> LoadedSession`. They are
tried in order; the first that recognises the file reads it.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from doctor.sources.base import LoadedSession, UnknownFormat, open_session_file

# Order matters: specific formats before the generic message dumps.
READER_MODULES = (
    "doctor.sources.qwen",
    "doctor.sources.claude",
    "doctor.sources.codex",
    "doctor.sources.gemini",
    "doctor.sources.dumps",
)
SNIFF_BYTES = 64 * 1024


def available_readers() -> list:
    return [importlib.import_module(name) for name in READER_MODULES]


def read_head(path: Path) -> bytes:
    with open_session_file(path) as handle:
        return handle.read(SNIFF_BYTES)


def open_session(path: Path, agent: str | None = None) -> LoadedSession:
    """Read `path` with the reader for `agent`, or the first reader that recognises it."""
    path = Path(path)
    head = read_head(path)
    readers = available_readers()
    if agent is not None:
        chosen = [r for r in readers if r.NAME == agent or agent in getattr(r, "ALIASES", ())]
        if not chosen:
            raise UnknownFormat(path, f"no reader for agent {agent!r} (known: {', '.join(r.NAME for r in readers)})")
        return chosen[0].read(path)
    if not head.strip():
        raise UnknownFormat(path, "file is empty: no session records to read")
    for reader in readers:
        if reader.sniff(path, head):
            return reader.read(path)
    tried = ", ".join(r.NAME for r in readers)
    raise UnknownFormat(path, f"unknown session format (tried: {tried})")
