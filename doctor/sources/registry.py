"""Format sniffing: which reader opens a given file.

Each reader module exposes `NAME` (agent/format name), `sniff(path, head) -> bool`
(cheap: looks at a `sniffing.Head`, the first bytes and the first records, however long those
records are) and `read(path) -> LoadedSession`. They are
tried in order; the first that recognises the file reads it.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from doctor.core.gc_pause import cyclic_gc_paused
from doctor.sources.base import LoadedSession, UnknownFormat
from doctor.sources.sniffing import Head

# Order matters: specific formats before the generic message dumps.
READER_MODULES = (
    "doctor.sources.qwen",
    "doctor.sources.claude",
    "doctor.sources.codex",
    "doctor.sources.gemini",
    "doctor.sources.dumps",
)


def available_readers() -> list:
    return list(_readers())


def _readers():
    """The reader modules in order, each imported only when the one before it did not take the file:
    a Qwen session never loads the other readers (start-up counts for `doctor memory --json`)."""
    for name in READER_MODULES:
        yield importlib.import_module(name)


def open_session(path: Path, agent: str | None = None) -> LoadedSession:
    """Read `path` with the reader for `agent`, or the first reader that recognises it (with no cyclic
    garbage collection meanwhile: a reader builds a large structure without a single cycle)."""
    path = Path(path)
    head = Head.read(path)
    if agent is not None:
        for reader in _readers():
            if reader.NAME == agent or agent in getattr(reader, "ALIASES", ()):
                with cyclic_gc_paused():
                    return reader.read(path)
        known = ", ".join(r.NAME for r in available_readers())
        raise UnknownFormat(path, f"no reader for agent {agent!r} (known: {known})")
    if not head.bytes.strip():
        raise UnknownFormat(path, "file is empty: no session records to read")
    for reader in _readers():
        if reader.sniff(path, head):
            with cyclic_gc_paused():
                return reader.read(path)
    tried = ", ".join(r.NAME for r in available_readers())
    raise UnknownFormat(path, f"unknown session format (tried: {tried})")
