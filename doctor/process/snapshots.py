"""`--snapshot` and `--compare`: tracemalloc snapshots on disk, written with Qwen's safety rules.

A snapshot is the Python counterpart of Qwen's V8 heap snapshot, and the same risks apply:
taking it costs memory when memory may already be short, the file can be large, repeated
requests can fill a disk, and the file describes the user's code. So, as in Qwen, a snapshot
is refused under high memory pressure or when the disk would be left with less than 512 MiB,
at most one is written per directory per minute, only the newest five are kept, the
directory is private (0700) and the file is private from the moment it exists (0600).

The file is MessagePack data, not `Snapshot.dump`'s pickle: `doctor memory --compare A B` may be
run on files someone else sent, and unpickling one, even with only tracemalloc's classes allowed,
runs the pickle machine on their bytes. A snapshot is only numbers and file names (each trace's
domain, size and frames, the traceback limit), so it is written as such and read back by a typed
decoder into `tracemalloc.Snapshot(traces, traceback_limit)`, the constructor tracemalloc itself
uses. A file of another shape (an older doctor's pickle included) is refused, naming itself.
"""

from __future__ import annotations

import os
import re
import sys
import tracemalloc
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Optional

import msgspec

from doctor.process.format import format_iso_timestamp, format_percent
from doctor.process.limits import effective_limit
from doctor.process.probes import DEFAULT_PROBES, Probes
from doctor.process.runtime import NOISE_FILTERS

MIB = 1024 * 1024

# Qwen refuses a heap snapshot at 85% heap pressure; here the ratio is RSS to the effective
# memory limit, because taking a tracemalloc snapshot copies every trace into new objects.
HIGH_MEMORY_PRESSURE_RATIO = 0.85

# Qwen estimates a heap snapshot at 3x the heap. A tracemalloc snapshot file holds one record
# per live trace, so its size follows the memory tracemalloc spends storing traces
# (`tracemalloc.get_tracemalloc_memory()`), not the traced bytes; 3x that is the estimate.
SNAPSHOT_SIZE_FACTOR = 3
MIN_FREE_BYTES_AFTER_SNAPSHOT = 512 * MIB

MAX_SNAPSHOTS = 5
RATE_LIMIT_SECONDS = 60

# Frames per traceback when doctor has to start tracing itself: one frame (the allocating
# line) is what `--compare` groups by and keeps tracing overhead lowest.
DEFAULT_TRACE_FRAMES = 1

SNAPSHOT_PREFIX = "doctor-tracemalloc-"
SNAPSHOT_SUFFIX = ".msgpack"
_SNAPSHOT_NAME = re.compile(r"^doctor-tracemalloc-\d+-(.+)\.(?:msgpack|pickle)$")
# An older doctor's snapshots (pickles): rotated out with the others, never read.
_OLD_SUFFIX = ".pickle"
SNAPSHOT_FORMAT = "doctor tracemalloc snapshot"

SENSITIVE_DATA_WARNING = (
    "The snapshot records the file path and line number of every live allocation, which can "
    "reveal user names, project names and source layout, and shows source lines when viewed "
    "on a machine that has the files. Do not share it publicly without reviewing it first."
)

STARTED_TRACING_NOTE = (
    "tracemalloc was not tracing, so doctor started it just now: this snapshot only covers "
    "allocations made from now on. Take another snapshot later and compare the two with "
    "`doctor memory --compare A B`."
)

# A trace as tracemalloc's own tuples hold it: (domain, size, frames most recent first as
# (filename, line number), total number of frames before the limit cut them).
RawTrace = tuple[int, int, tuple[tuple[str, int], ...], Optional[int]]


class StoredSnapshot(msgspec.Struct, array_like=True):
    format: str
    version: int
    traceback_limit: int
    traces: list[RawTrace]


_last_write_by_directory: dict[Path, float] = {}


class SnapshotRefused(Exception):
    """A safety rule stopped the snapshot; the message says which and what to do."""


class SnapshotLoadError(Exception):
    """A file given to `--compare` is not a tracemalloc snapshot doctor can read."""


@dataclass(frozen=True)
class SnapshotResult:
    """Where the snapshot went, and what the user must be told about it."""

    path: Path
    started_tracing: bool
    warning: str = SENSITIVE_DATA_WARNING

    @property
    def note(self) -> str | None:
        return STARTED_TRACING_NOTE if self.started_tracing else None

    def to_dict(self) -> dict:
        return {
            "path": str(self.path),
            "startedTracing": self.started_tracing,
            "note": self.note,
            "warning": self.warning,
        }


@dataclass(frozen=True)
class SnapshotDiff:
    """How the memory allocated from one source line changed between two snapshots."""

    location: str
    size_delta: int
    count_delta: int
    size: int
    count: int

    def to_dict(self) -> dict:
        return {
            "location": self.location,
            "sizeDelta": self.size_delta,
            "countDelta": self.count_delta,
            "size": self.size,
            "count": self.count,
        }


def default_snapshot_directory() -> Path:
    """The per-user state directory: `~/.local/state/doctor/memory-snapshots` on Linux."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg_state = os.environ.get("XDG_STATE_HOME", "")
        # The XDG spec says relative paths are invalid and must be ignored.
        base = Path(xdg_state) if os.path.isabs(xdg_state) else Path.home() / ".local" / "state"
    return base / "doctor" / "memory-snapshots"


def write_tracemalloc_snapshot(
    *,
    directory: Path | None = None,
    probes: Probes = DEFAULT_PROBES,
    frames: int = DEFAULT_TRACE_FRAMES,
    min_free_bytes_after: int = MIN_FREE_BYTES_AFTER_SNAPSHOT,
    keep: int = MAX_SNAPSHOTS,
    rate_limit_seconds: float = RATE_LIMIT_SECONDS,
) -> SnapshotResult:
    """Dump a tracemalloc snapshot into `directory`, or raise `SnapshotRefused`.

    Checks run cheapest and most protective first: memory pressure, the per-directory rate
    limit, free disk; a refusal leaves the process as it was. If tracemalloc is off it is then
    started (with `frames` frames) and left on, so a later snapshot has something to compare
    against.
    """
    directory = Path(directory) if directory is not None else default_snapshot_directory()
    now = probes.clock()
    _refuse_under_memory_pressure(probes)
    _make_private_directory(directory)
    _enforce_rate_limit(directory, now, rate_limit_seconds)

    _refuse_without_disk_space(directory, probes, min_free_bytes_after)

    started_tracing = not tracemalloc.is_tracing()
    if started_tracing:
        tracemalloc.start(frames)

    path = directory / f"{SNAPSHOT_PREFIX}{os.getpid()}-{snapshot_timestamp(now)}{SNAPSHOT_SUFFIX}"
    _dump_privately(tracemalloc.take_snapshot(), path)
    _last_write_by_directory[directory.resolve()] = now.timestamp()
    remove_old_snapshots(directory, keep)
    return SnapshotResult(path=path, started_tracing=started_tracing)


def snapshot_timestamp(moment: datetime) -> str:
    """Qwen's file-name timestamp: the ISO string with `:` and `.` turned into `-`."""
    return re.sub(r"[:.]", "-", format_iso_timestamp(moment))


def _refuse_under_memory_pressure(probes: Probes) -> None:
    rss = probes.rss()
    limit = effective_limit(probes.cgroup_limit(), probes.physical_memory())
    if rss is None or limit is None or limit.bytes <= 0:
        return
    ratio = rss / limit.bytes
    if ratio >= HIGH_MEMORY_PRESSURE_RATIO:
        raise SnapshotRefused(
            f"Snapshot skipped: memory pressure is already high (RSS is {format_percent(ratio)} "
            f"of the {limit.source} limit), and taking a tracemalloc snapshot copies every trace "
            "into memory, which could make the process unresponsive or trigger OOM. Restart the "
            "host first if it is unstable, or retry before memory pressure reaches the warning "
            "threshold."
        )


def _make_private_directory(directory: Path) -> None:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkdir's mode is filtered by the umask and ignored for an existing directory.
    directory.chmod(0o700)


def _enforce_rate_limit(directory: Path, now: datetime, rate_limit_seconds: float) -> None:
    if rate_limit_seconds <= 0:
        return
    last_write = _last_write_by_directory.get(directory.resolve())
    elapsed = now.timestamp() - last_write if last_write is not None else None
    if elapsed is not None and elapsed < rate_limit_seconds:
        wait_seconds = -int(-(rate_limit_seconds - elapsed) // 1)  # ceil, as Math.ceil
        raise SnapshotRefused(
            f"Snapshot rate limit: wait {wait_seconds}s before writing another snapshot "
            "in this directory."
        )


def _refuse_without_disk_space(directory: Path, probes: Probes, min_free_bytes_after: int) -> None:
    estimated_bytes = SNAPSHOT_SIZE_FACTOR * tracemalloc.get_tracemalloc_memory()
    try:
        available = probes.free_disk(directory)
    except OSError as error:
        raise SnapshotRefused(
            f"Unable to check available disk space for tracemalloc snapshot: {error}"
        ) from error
    if available - estimated_bytes < min_free_bytes_after:
        raise SnapshotRefused(
            "Insufficient free disk space for tracemalloc snapshot; "
            "skipping to avoid filling the disk."
        )


def _dump_privately(snapshot: tracemalloc.Snapshot, path: Path) -> None:
    """Write the snapshot as data into a file created 0600 (O_EXCL: never an existing file or link)."""
    data = msgspec.msgpack.encode(StoredSnapshot(SNAPSHOT_FORMAT, 1, snapshot.traceback_limit,
                                                 [_raw_trace(trace) for trace in snapshot.traces]))
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def _raw_trace(trace: tracemalloc.Trace) -> RawTrace:
    """The tuple `Snapshot(traces, …)` takes, from the public Trace (its Traceback lists frames oldest first)."""
    traceback = trace.traceback
    return trace.domain, trace.size, tuple((frame.filename, frame.lineno) for frame in reversed(traceback)), \
        traceback.total_nframe


def remove_old_snapshots(directory: Path, keep: int = MAX_SNAPSHOTS) -> None:
    """Delete all but the `keep` newest snapshots (by mtime, then by the name's timestamp)."""
    if keep < 1:
        return
    snapshots = [
        path
        for path in directory.iterdir()
        if path.name.startswith(SNAPSHOT_PREFIX) and path.name.endswith((SNAPSHOT_SUFFIX, _OLD_SUFFIX))
    ]
    snapshots.sort(key=_newest_first_key, reverse=True)
    for path in snapshots[keep:]:
        path.unlink(missing_ok=True)


def _newest_first_key(path: Path) -> tuple[float, str, str]:
    try:
        mtime = path.lstat().st_mtime
    except OSError:
        mtime = 0.0
    match = _SNAPSHOT_NAME.match(path.name)
    return (mtime, match.group(1) if match else "", path.name)


def load_snapshot(path: Path | str) -> tracemalloc.Snapshot:
    """Read a snapshot `write_tracemalloc_snapshot` wrote; SnapshotLoadError for anything else."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise SnapshotLoadError(f"{path}: not a readable tracemalloc snapshot ({error.strerror or error})") from None
    try:
        stored = msgspec.msgpack.decode(data, type=StoredSnapshot)
    except (msgspec.DecodeError, RecursionError) as error:
        old = data[:1] == b"\x80"  # a pickle's PROTO opcode: an older doctor's snapshot
        reason = "an older doctor's pickle, which doctor no longer reads: take new snapshots" if old else str(error)
        raise SnapshotLoadError(f"{path}: not a readable tracemalloc snapshot ({reason})") from None
    if stored.format != SNAPSHOT_FORMAT or stored.version != 1:
        raise SnapshotLoadError(f"{path}: not a tracemalloc snapshot doctor wrote ({stored.format!r} {stored.version})")
    return tracemalloc.Snapshot(tuple(stored.traces), stored.traceback_limit)


def compare_snapshots(
    older: Path | str | tracemalloc.Snapshot,
    newer: Path | str | tracemalloc.Snapshot,
    top: int = 20,
) -> list[SnapshotDiff]:
    """The `top` source lines whose allocations changed most from `older` to `newer`.

    Ordered by the absolute size change, biggest first, as `Snapshot.compare_to` orders them.
    Allocations by tracemalloc and the import machinery are left out.
    """
    older_snapshot, newer_snapshot = _as_snapshot(older), _as_snapshot(newer)
    try:
        differences = newer_snapshot.filter_traces(NOISE_FILTERS).compare_to(
            older_snapshot.filter_traces(NOISE_FILTERS), "lineno"
        )
    except (TypeError, ValueError, AttributeError, IndexError, KeyError) as error:
        # Traces of the right types can still disagree with each other.
        raise SnapshotLoadError(f"snapshots cannot be compared ({error})") from error
    return [
        SnapshotDiff(
            location=f"{difference.traceback[0].filename}:{difference.traceback[0].lineno}",
            size_delta=difference.size_diff,
            count_delta=difference.count_diff,
            size=difference.size,
            count=difference.count,
        )
        for difference in differences[:top]
    ]


def _as_snapshot(source: Path | str | tracemalloc.Snapshot) -> tracemalloc.Snapshot:
    return source if isinstance(source, tracemalloc.Snapshot) else load_snapshot(source)
