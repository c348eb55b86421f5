"""`doctor memory --follow`: keep a session file's report current while its agent writes it.

The file is polled with `os.stat` (no watcher dependency). What changed decides
what is read again:
- appended bytes: a Qwen recording's pass-1 index is extended from where it
  stopped, so only the new lines are parsed; other formats are re-read whole;
- a torn last line (the agent mid-write): left for the next poll;
- truncation, or rewritten bytes before where reading stopped: read again from
  the start;
- rotation (a new inode at the same path): read again from the start;
- the file missing (between a rotation's rename and create): the last report stays.

For Qwen the history rebuild then re-reads the active chain's records (by byte
offset) to analyse them, as `doctor memory PATH` does: the index is what is
incremental, not the analysis.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from doctor.assemble import ReportOptions, report_for_session
from doctor.live.summary import summary_line
from doctor.report.inert import inert_json, inert_line
from doctor.report.model import MemoryReport
from doctor.sources.base import LoadedSession, SourceError
from doctor.tui.provider import ProgressCallback, SessionText

DEFAULT_POLL_SECONDS = 0.5
# Bytes at the start and just before the resume offset, compared on each poll to notice a rewrite.
_GUARD_BYTES = 64

APPENDED, TRUNCATED, REWRITTEN, ROTATED, OPENED = "appended", "truncated", "rewritten", "rotated", "opened"

BuildReport = Callable[[LoadedSession], MemoryReport]


@dataclass(frozen=True)
class Change:
    """What a poll found: why the report was rebuilt, and the new report."""

    reason: str
    report: MemoryReport
    size: int


class _QwenIndexer:
    """Pass 1 of a Qwen recording, extended line by line as the file grows."""

    def __init__(self, path: Path):
        from doctor.sources.qwen.transcript import TranscriptIndex

        self.index = TranscriptIndex(path)
        self.offset = 0
        self.lines = 0

    def read_more(self) -> LoadedSession:
        from doctor.sources.qwen import session_from_index
        from doctor.sources.qwen.transcript import extend_index

        self.offset, self.lines = extend_index(self.index, self.offset, self.lines, whole_lines_only=True)
        return session_from_index(self.index)


class _WholeFileReader:
    """Any other format: the reader runs again over the whole file on each change."""

    def __init__(self, path: Path, agent: str | None):
        self.path = path
        self.agent = agent
        self.offset = 0

    def read_more(self) -> LoadedSession:
        from doctor.sources.registry import open_session

        self.offset = os.stat(self.path).st_size
        return open_session(self.path, agent=self.agent)


def _reader_for(path: Path, agent: str | None):
    from doctor.sources import qwen
    from doctor.sources.sniffing import Head

    if agent == qwen.NAME or (agent is None and qwen.sniff(path, Head.read(path))):
        return _QwenIndexer(path)
    return _WholeFileReader(path, agent)


class FileFollower:
    """One session file followed across appends, truncation and rotation."""

    def __init__(self, path: Path, *, agent: str | None = None, build_report: BuildReport | None = None):
        self.path = Path(path)
        self.agent = agent
        self.build_report = build_report or (lambda session: report_for_session(session, ReportOptions()))
        self.session: LoadedSession | None = None
        self.report: MemoryReport | None = None
        self.reads_from_start = 0
        self.waiting_for: str | None = None  # why there is no report yet (or no newer one)
        self._reader = None
        self._identity: tuple[int, int] | None = None
        self._stamp: tuple[int, int] | None = None
        self._guard = b""

    def poll(self) -> Change | None:
        """Look at the file once; a Change when the report had to be rebuilt, else None."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return None
        reason = self._reason(stat)
        if reason is None:
            return None
        if reason == APPENDED and self.report is None and isinstance(self._reader, _WholeFileReader):
            reason = OPENED  # it was sniffed while empty or unreadable: sniff again
        if reason != APPENDED:
            self._reader = _reader_for(self.path, self.agent)
            self._identity = (stat.st_dev, stat.st_ino)
            self.reads_from_start += 1
        before = self._reader.offset
        self._stamp = (stat.st_size, stat.st_mtime_ns)
        try:
            session = self._reader.read_more()
        except SourceError as exc:
            self.waiting_for = str(exc)  # e.g. no records yet, or rotated to an empty file
            return None
        finally:
            self._guard = self._read_guard()
        self.waiting_for = None
        if self.report is not None and reason == APPENDED and self._reader.offset == before:
            return None  # only a torn line so far
        self.session = session
        self.report = self.build_report(session)
        return Change(reason, self.report, stat.st_size)

    def _reason(self, stat: os.stat_result) -> str | None:
        if self._reader is None:
            return OPENED
        if (stat.st_dev, stat.st_ino) != self._identity:
            return ROTATED
        if stat.st_size < self._reader.offset:
            return TRUNCATED
        if self._read_guard() != self._guard:
            return REWRITTEN
        if (stat.st_size, stat.st_mtime_ns) == self._stamp:
            return None
        return APPENDED

    def _read_guard(self) -> bytes:
        """The first and the last bytes already read: a rewrite of the same size changes them."""
        offset = self._reader.offset
        start = max(0, offset - _GUARD_BYTES)
        try:
            with open(self.path, "rb") as handle:
                head = handle.read(min(offset, _GUARD_BYTES))
                handle.seek(start)
                return head + handle.read(offset - start)
        except OSError:
            return b""


def follow(follower: FileFollower, *, interval: float = DEFAULT_POLL_SECONDS, stop: Callable[[], bool] = lambda: False) -> Iterator[Change]:
    """Changes as they happen, polling every `interval` seconds until `stop()` is true."""
    while not stop():
        change = follower.poll()
        if change is not None:
            yield change
        else:
            time.sleep(interval)


class FollowProvider(SessionText):
    """The TUI's provider in follow mode: `refresh()` polls the file; results are read from its latest session."""

    def __init__(self, follower: FileFollower, *, refresh_interval: float = 1.0):
        self.follower = follower
        self.refresh_interval = refresh_interval

    def load(self, progress: ProgressCallback) -> MemoryReport:
        progress(None, f"reading {self.follower.path.name}")
        self.follower.poll()
        if self.follower.report is None:
            raise SourceError(self.follower.path, self.follower.waiting_for or "no such file")
        progress(1.0, "ready")
        return self.follower.report

    def refresh(self) -> MemoryReport | None:
        change = self.follower.poll()
        return None if change is None else change.report

    @property
    def _session(self):
        return self.follower.session


def print_changes(
    follower: FileFollower,
    out: TextIO,
    *,
    as_json: bool = False,
    interval: float = DEFAULT_POLL_SECONDS,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """The text face of `--follow`: one summary line per change, or one compact JSON report per line."""
    for change in follow(follower, interval=interval, stop=stop):
        if as_json:
            line = inert_json(json.dumps(change.report.to_dict(), ensure_ascii=False, separators=(",", ":"))) + "\n"
        else:
            line = f"{time.strftime('%H:%M:%S')} {change.reason:>9} {change.size:>12,} B  {summary_line(change.report)}\n"
        _write_whole(out, line)


def _write_whole(out: TextIO, line: str) -> None:
    """Write `line` out whole, with Ctrl-C held back until it is: stopped mid-write, `--follow --json`
    left half a report on its last line (the mutation fuzzer saw one cut at 4,078 chars). The SIGINT
    handler is swapped for one that only takes note (a signal mask would not do: the kernel gives a
    process's signal to any thread not masking it, and Python then raises in the main thread anyway);
    a Ctrl-C that came meanwhile is raised once the line is out."""
    interrupted = []
    try:
        previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    except ValueError:  # not the main thread: a Ctrl-C is not raised here
        previous = None
    try:
        _write_all(out, line)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if interrupted:
        raise KeyboardInterrupt


def _write_all(out: TextIO, line: str) -> None:
    """Every byte of `line`, straight to the stream's file descriptor: a buffered text stream whose
    blocked write a signal interrupted returned with the rest of the line dropped, though the handler
    raised nothing (a 250,000-character line to a full pipe came out as its first 131,072 bytes)."""
    try:
        descriptor = out.fileno()
    except (AttributeError, OSError, ValueError):  # not a file: a StringIO, a test's collector
        out.write(line)
        out.flush()
        return
    out.flush()
    data = memoryview(line.encode(getattr(out, "encoding", None) or "utf-8", getattr(out, "errors", None) or "strict"))
    while data:
        data = data[os.write(descriptor, data):]


def follow_command(path: Path, agent: str | None, build_report: BuildReport, *, fmt: str = "text", tui: bool = False) -> int:
    """`doctor memory --follow`: the TUI refreshing itself, or lines on stdout until Ctrl-C."""
    from doctor import exitcodes

    if fmt not in ("text", "json"):
        raise SourceError(path, f"--follow prints text or JSON lines, not {fmt}")
    if not Path(path).is_file():
        raise SourceError(path, "no such file")
    follower = FileFollower(path, agent=agent, build_report=build_report)
    if tui:
        from doctor.tui import run_memory_app

        run_memory_app(provider=FollowProvider(follower))
        return exitcodes.OK
    print(f"following {inert_line(path)} (Ctrl-C to stop)", file=sys.stderr, flush=True)  # a name may hold escapes
    try:
        print_changes(follower, sys.stdout, as_json=fmt == "json")
    except KeyboardInterrupt:
        pass
    return exitcodes.OK
