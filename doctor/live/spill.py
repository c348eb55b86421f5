"""The spill audit of a live history: the files a host's tools spilled, checked on every report.

A recording's reader knows where its agent spills; a live host says so itself
(`doctor.attach(history, spill_roots=[...])`), and its stubs name the files. The audit
is the one `doctor memory FILE` runs, so the TUI's detail screen can page a spilled
output and the Overview reports the audit. A TUI refreshes every two seconds: the
pointers are the stubs the incremental analysis already found (the Contents are not
walked again), rebuilt only when they changed, and a file is hashed again only when its
size or mtime changed (DigestCache), so a refresh costs a stat per file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from doctor.sources.base import LoadedSession
from doctor.spill.audit import AuditReport, audit_spill
from doctor.spill.digest import DigestCache
from doctor.spill.pointers import pointers_for
from doctor.spill.resolve import SpillLocator


class LiveSpillAudit:
    """Audits the spill files a live history points to, under the host's `roots`."""

    def __init__(self, agent: str, roots: Iterable[str | Path] = ()) -> None:
        self.agent = agent
        self.roots = tuple(Path(root) for root in roots)
        self._cache = DigestCache()
        self._seen: tuple | None = None
        self._pointers: list = []

    def audit(self, analysis) -> AuditReport | None:
        """The audit of the stubs `analysis` found; None when nothing spilled and no root was given."""
        if analysis is None:
            return None
        stubs = analysis.with_stubs()
        if not stubs and not self.roots:
            return None
        seen = tuple((row.ordinal, row.call_id, row.stub) for row in stubs)
        session = LoadedSession(agent=self.agent, path=None, history=lambda: iter(()))
        if seen != self._seen:
            self._pointers = pointers_for(session, analysis)
            self._seen = seen
        return audit_spill(session, self._pointers, SpillLocator(None, session_roots=self.roots), cache=self._cache)
