"""`--snapshot` and `--compare`: tracemalloc snapshots on disk, written with Qwen's safety rules.

A snapshot is the Python counterpart of Qwen's V8 heap snapshot, and the same risks apply:
taking it costs memory when memory may already be short, the file can be large, repeated
requests can fill a disk, and the file describes the user's code. So, as in Qwen, a snapshot
is refused under high memory pressure or when the disk would be left with less than 512 MiB,
at most one is written per directory per minute, only the newest five are kept, the
directory is private (0700) and the file is private from the moment it exists (0600).

Reading a snapshot back uses a restricted unpickler: `doctor memory --compare A B` may be run
on files someone else sent, and a plain `pickle.load` would run any code they contain.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import sys
import tracemalloc
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

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
SNAPSHOT_SUFFIX = ".pickle"
_SNAPSHOT_NAME = re.compile(r"^doctor-tracemalloc-\d+-(.+)\.pickle$")

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

_SAFE_CLASSES = {("tracemalloc", "Snapshot"), ("tracemalloc", "_Traces")}

# What a truncated, foreign or hostile file raises while being unpickled.
_UNREADABLE = (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError)

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
    """Create the file 0600 first, so `Snapshot.dump` never leaves it readable to others."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(descriptor)
    try:
        snapshot.dump(str(path))
        path.chmod(0o600)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def remove_old_snapshots(directory: Path, keep: int = MAX_SNAPSHOTS) -> None:
    """Delete all but the `keep` newest snapshots (by mtime, then by the name's timestamp)."""
    if keep < 1:
        return
    snapshots = [
        path
        for path in directory.iterdir()
        if path.name.startswith(SNAPSHOT_PREFIX) and path.name.endswith(SNAPSHOT_SUFFIX)
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


class _SnapshotUnpickler(pickle.Unpickler):
    """Builds tracemalloc snapshots and nothing else."""

    def find_class(self, module: str, name: str):
        if (module, name) not in _SAFE_CLASSES:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        return super().find_class(module, name)


def load_snapshot(path: Path | str) -> tracemalloc.Snapshot:
    """Read a snapshot written by `Snapshot.dump`, refusing pickles that build anything else."""
    try:
        data = Path(path).read_bytes()
        snapshot = _SnapshotUnpickler(io.BytesIO(data)).load()
    except _UNREADABLE as error:
        raise SnapshotLoadError(f"{path}: not a readable tracemalloc snapshot ({error})") from error
    if not isinstance(snapshot, tracemalloc.Snapshot):
        raise SnapshotLoadError(f"{path}: not a tracemalloc snapshot")
    return snapshot


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
        # A pickle of the right classes can still carry malformed traces.
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
