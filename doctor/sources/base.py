"""What every session reader produces: a neutral history view plus what is not model context.

Readers turn an agent's recording into Gemini-style Contents (`{"role", "parts"}`
with `text` / `functionCall` / `functionResponse{id, name, response{output|error},
parts}` / `inlineData` parts) holding what the model was sent, and report copies of
tool output kept elsewhere in the file (UI displays, Claude's `toolUseResult`,
`progress` records) as side-channel figures, never as model context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from doctor.core.stored import StoredIssue


class SourceError(Exception):
    """The input cannot be read at all; the message names the file (and line)."""

    def __init__(self, path: Path | str, message: str, line: int | None = None):
        self.path = Path(path)
        self.line = line
        location = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{location}: {message}")


def os_error_reason(exc: OSError) -> str:
    """A short reason for a failed open, the same wording wherever doctor opens a file."""
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return f"cannot read: {exc.strerror or exc}"


def open_session_file(path: Path) -> BinaryIO:
    """Open a session file read-only, turning OS errors into a SourceError naming it."""
    try:
        return open(path, "rb")
    except OSError as exc:
        raise SourceError(path, os_error_reason(exc)) from None


class UnknownFormat(SourceError):
    """No reader recognised the file; the message lists what was tried."""


@dataclass(frozen=True, slots=True)
class SourceIssue:
    """A problem in part of the input that the reader skipped and went on."""

    path: Path
    line: int | None
    message: str
    severity: str = "warning"  # "warning" (skipped data) or "note" (expected, e.g. a torn last line)

    def __str__(self) -> str:
        location = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{location}: {self.message}"


def stored_issue(issue: SourceIssue) -> StoredIssue:
    """The issue as a stored reader state keeps it (the state knows its path)."""
    from doctor.core.stored import StoredIssue

    return StoredIssue(issue.line, issue.message, issue.severity)


def restored_issue(path: Path, stored: StoredIssue) -> SourceIssue:
    return SourceIssue(path, stored.line, stored.message, stored.severity)


@dataclass
class SideChannelCopy:
    """Copies of tool output the file keeps outside the model's context."""

    kind: str  # "ui-display", "toolUseResult", "progress", ...
    count: int = 0
    chars: int = 0

    def add(self, chars: int) -> None:
        self.count += 1
        self.chars += chars


@dataclass
class LoadedSession:
    """A session read from disk (or a live host), ready for analysis.

    `history` is a callable returning a fresh iterator of Contents, so readers of
    huge files can stream (one record at a time) and the analysis can walk it more
    than once without the reader keeping payloads in memory. `measured_history`, when
    a reader has one, gives the same Contents for the retention analysis only: long
    outputs may be `MeasuredText` (head and JS length, not the text); `measured_ui_history`
    is the same for `ui_history` (long display strings). `turns_marked`: the reader marks the
    Contents where the person's typed prompts start (`doctor.core.turns`).
    """

    agent: str
    path: Path | None
    history: Callable[[], Iterator]
    session_id: str | None = None
    format: str = ""
    ui_history: list | None = None
    side_channel: dict[str, SideChannelCopy] = field(default_factory=dict)
    issues: list[SourceIssue] = field(default_factory=list)
    project_dir: Path | None = None
    spill_roots: list[Path] = field(default_factory=list)
    started: str | None = None
    meta: dict = field(default_factory=dict)
    measured_history: Callable[[], Iterator] | None = None
    measured_ui_history: Iterable | None = None
    turns_marked: bool = False

    def history_to_measure(self) -> Iterator:
        """The history the retention analysis reads: `measured_history` when there is one."""
        return (self.measured_history or self.history)()

    def ui_history_to_measure(self) -> Iterable | None:
        """The UI history the retention analysis reads: `measured_ui_history` when there is one
        (and a UI history at all: None means the session has none, as in a headless run)."""
        return self.ui_history if self.ui_history is None or self.measured_ui_history is None else self.measured_ui_history

    def side(self, kind: str) -> SideChannelCopy:
        return self.side_channel.setdefault(kind, SideChannelCopy(kind))
