"""Attach doctor to a live history inside a Python agent host, by reference.

The host hands over its own list (or a callable returning it); doctor never
copies, serialises or mutates it. Reports reuse the work of earlier ones: after
the host appends, only the new Contents are analysed (see RetentionTracker for
what in-place edits it cannot see, and `invalidate()` for those).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from msgspec.structs import replace

from doctor.assemble import ReportOptions, resolve_settings
from doctor.core.budgets import INFINITE, ToolSpec
from doctor.core.retention import RetentionUnavailable
from doctor.live.spill import LiveSpillAudit
from doctor.live.tracker import RetentionTracker
from doctor.report.model import MemoryReport, SourceInfo

HistoryLike = Sequence | Callable[[], Sequence]


def _host_tools(tools: Iterable | Mapping | None) -> tuple[ToolSpec, ...]:
    """Host tools as `{name: max_output_chars}` (None = threshold, inf = self-managed) or ToolSpecs."""
    if tools is None:
        return ()
    if isinstance(tools, Mapping):
        return tuple(
            ToolSpec(name, name, None if budget is None else (INFINITE if budget <= 0 else budget))
            for name, budget in tools.items()
        )
    return tuple(tools)


class LiveSession:
    """A host's live history with doctor attached."""

    def __init__(
        self,
        history: HistoryLike,
        *,
        ui_history: HistoryLike | None = None,
        tools: Iterable | Mapping | None = None,
        settings: Mapping | str | Path | None = None,
        agent: str = "python-host",
        options: ReportOptions | None = None,
        spill_roots: Iterable[str | Path] = (),
    ):
        """`spill_roots`: the directories the host's tools spill big outputs to (audited, and paged in the TUI)."""
        self._history = history
        self._ui_history = ui_history
        base = options or ReportOptions()
        if isinstance(settings, (str, Path)):
            base = replace(base, settings_files=(Path(settings),))
        elif settings is not None:
            base = replace(base, settings=settings)
        self.options = replace(base, host_tools=_host_tools(tools))
        self.agent = agent
        self._resolved = resolve_settings(self.options, Path.cwd())
        self._tracker = RetentionTracker(self._resolved.budgets, self._resolved.image_token_estimate)
        self._spill = LiveSpillAudit(agent, spill_roots)
        self._lock = threading.Lock()

    def history(self) -> Sequence:
        """The host's list itself (never a copy)."""
        return self._history() if callable(self._history) else self._history

    def ui_history(self) -> Sequence | None:
        ui = self._ui_history
        return ui() if callable(ui) else ui

    def invalidate(self) -> None:
        """Forget cached work; call after editing Contents in place."""
        with self._lock:
            self._tracker.invalidate()

    def report(self, *, process: object | None = None) -> MemoryReport:
        """A report for the history as it is now (a consistent prefix if the host is appending)."""
        with self._lock:
            history = self.history()
            try:
                analysis, unavailable = self._tracker.analyze(history, self.ui_history()), None
            except RetentionUnavailable as exc:
                self._tracker.invalidate()
                analysis, unavailable = None, f"Tool result retention diagnostics unavailable: {exc}"
            spill = self._spill.audit(analysis)
        return MemoryReport(
            source=SourceInfo(kind="live", agent=self.agent),
            retention=analysis,
            retention_unavailable=unavailable,
            spill=spill,
            settings=self._resolved.info,
            process=process,
            top=self.options.top,
            path_style=self.options.path_style,
        )


def attach(
    history: HistoryLike,
    *,
    ui_history: HistoryLike | None = None,
    tools: Iterable | Mapping | None = None,
    settings: Mapping | str | Path | None = None,
    spill_roots: Iterable[str | Path] = (),
) -> LiveSession:
    """Attach to a live history (a list of Contents or a callable returning it).

    `spill_roots`: where the host's tools write the full text of outputs they cut short;
    its stubs' files are audited there and the TUI pages them (enter on a result).
    """
    return LiveSession(history, ui_history=ui_history, tools=tools, settings=settings, spill_roots=spill_roots)
