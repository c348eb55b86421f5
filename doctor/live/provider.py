"""The TUI's report provider for a history attached in process (`doctor.attach`).

The TUI calls `load(progress)` once, then `refresh()` on an interval from a
worker thread. Each refresh reads the host's list by reference through
`LiveSession.report()`, so only Contents appended since the last one are
analysed; process diagnostics are those of the current process, the host.
"""

from __future__ import annotations

from doctor.live import LiveSession
from doctor.process import collect_process_diagnostics
from doctor.report.model import MemoryReport
from doctor.tui.provider import ProgressCallback, SessionText

DEFAULT_REFRESH_SECONDS = 2.0


class LiveSessionProvider(SessionText):
    """Reports of a LiveSession for the doctor TUI, refreshed while the host keeps working.

    `preview` and `full_text` (SessionText) read a result from the host's own objects.
    """

    def __init__(self, session: LiveSession, *, process: bool = True, refresh_interval: float = DEFAULT_REFRESH_SECONDS):
        self.session = self._session = session
        self.process = process
        self.refresh_interval = refresh_interval
        self.last_report: MemoryReport | None = None
        self._seen: tuple[int, int] | None = None

    def load(self, progress: ProgressCallback | None = None) -> MemoryReport:
        if progress is not None:
            progress(None, "analysing the live history")
        report = self._report()
        if progress is not None:
            progress(1.0, "ready")
        return report

    def refresh(self) -> MemoryReport | None:
        """A new report, or None when nothing changed (the history, or the process if shown)."""
        if not self.process and self._signature() == self._seen:
            return None
        return self._report()

    def _signature(self) -> tuple[int, int]:
        """Length and last Content's identity: enough to notice appends, replacements and truncation."""
        history = self.session.history()
        length = len(history)
        return length, id(history[length - 1]) if length else 0

    def _report(self) -> MemoryReport:
        signature = self._signature()
        process = collect_process_diagnostics(history=self.session.history()) if self.process else None
        self.last_report = self.session.report(process=process)
        self._seen = signature
        return self.last_report
