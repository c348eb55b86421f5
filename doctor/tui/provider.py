"""Where the TUI's report comes from: a small protocol, so the screens never know.

A provider hands the screen a finished `MemoryReport`; it never hands it a history to
analyse. `load(progress)` runs once on a worker thread (it may take seconds on a large
dump and reports how far it got through `progress(fraction, message)`); `refresh()`,
when a provider has it, runs on an interval in live and follow modes and returns a new
report, or None when nothing changed. `preview(result)` optionally returns a bounded
plain-text head of one result for the detail screen. Live attach and `--follow`
implement this protocol elsewhere; the two here cover a report built up front and a
report built by a callable (the CLI's case).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from doctor.report.model import MemoryReport

ProgressCallback = Callable[..., None]
"""`progress(fraction or None when unknown, message, report=None)`; safe to call from any thread.
A `report` passed along is shown at once, before `load` returns: the figures first, the slower
parts (the spill audit) patched in when `load` returns the full report."""

PREVIEW_CHARS = 4_000


@runtime_checkable
class ReportProvider(Protocol):
    """What `MemoryScreen` needs. Only `load` is required."""

    def load(self, progress: ProgressCallback) -> MemoryReport: ...


def refresher(provider: object) -> Callable[[], MemoryReport | None] | None:
    """The provider's `refresh` if it has one (live / follow), else None."""
    refresh = getattr(provider, "refresh", None)
    return refresh if callable(refresh) else None


def refresh_interval(provider: object, default: float = 2.0) -> float:
    value = getattr(provider, "refresh_interval", None)
    return float(value) if isinstance(value, (int, float)) and value > 0 else default


class SessionText:
    """`preview` and `full_text` of a result, read again from the provider's session (if any), and the
    session with the report's options for the What-if tab (`whatif_source`)."""

    _session: object | None = None
    _options: object | None = None

    def whatif_source(self) -> tuple[object, object] | None:
        """(session, ReportOptions) a replay starts from, or None when the report has no session file."""
        if self._session is None or getattr(self._session, "path", None) is None:
            return None
        if self._options is None:
            from doctor.assemble import ReportOptions

            return self._session, ReportOptions()
        return self._session, self._options

    def preview(self, result) -> str | None:
        return session_preview(self._session, result)

    def full_text(self, result) -> str | None:
        return session_preview(self._session, result, limit=None)


class StaticProvider(SessionText):
    """A report that is already built (tests, hosts that built it themselves)."""

    def __init__(self, report: MemoryReport, *, session: object | None = None, options: object | None = None) -> None:
        self._report = report
        self._session = session
        self._options = options

    def load(self, progress: ProgressCallback) -> MemoryReport:
        progress(1.0, "ready")
        return self._report


class CallableProvider(SessionText):
    """A report built by `load(progress)` on the worker thread (the `doctor memory` CLI)."""

    def __init__(self, load: Callable[[ProgressCallback], MemoryReport], *, session: object | None = None,
                 options: object | None = None) -> None:
        self._load = load
        self._session = session
        self._options = options

    def load(self, progress: ProgressCallback) -> MemoryReport:
        return self._load(progress)


def session_preview(session: object | None, result, limit: int | None = PREVIEW_CHARS) -> str | None:
    """The first `limit` characters of one result's output, read again from the session.

    Runs on a worker thread: it walks the session's history up to the result's Content
    (the readers stream, so this is one pass and no Content is kept). None when the
    session cannot be re-read or the part is not there.
    """
    if session is None or result is None:
        return None
    from doctor.core.parts import field
    from doctor.core.result_table import function_response_of, raw_result_text

    history = getattr(session, "history", None)
    if not callable(history):
        return None
    try:
        for index, content in enumerate(history()):
            if index < result.content_index:
                continue
            parts = field(content, "parts") or ()
            part = list(parts)[result.part_index]
            fr = function_response_of(part)
            raw = raw_result_text(fr) if fr is not None else None
            if isinstance(raw, str):
                return raw[:limit]
            text = field(part, "text")
            return text[:limit] if isinstance(text, str) else None
    except Exception:  # a preview is a nicety; the screen says it is unavailable
        return None
    return None
