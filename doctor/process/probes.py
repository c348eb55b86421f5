"""Where every raw reading comes from, bundled so tests can swap any single one.

Collection, sampling, risk rules and snapshot refusals all read the process through a
`Probes` bundle. Replacing one reader (`dataclasses.replace(DEFAULT_PROBES, rss=lambda: ...)`)
lets a test stage a process near its memory limit without allocating gigabytes.

Each OS reader returns `None` when the platform cannot answer, the way Qwen's optional probes
degrade to `null` instead of failing the whole report.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import psutil

from doctor.process.limits import read_cgroup_memory_limit, read_physical_memory
from doctor.process.model import (
    CpuTimes,
    GcState,
    MemoryLimit,
    PeakRss,
    PhysicalMemory,
    SmapsRollup,
    TracemallocState,
)
from doctor.process.runtime import count_tracked_objects, read_gc_state, read_tracemalloc_state

try:
    import resource
except ImportError:  # Windows has no getrusage
    resource = None

PROC_SELF = Path("/proc/self")
SMAPS_PARSE_ERROR_CHARS = 80


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def read_rss() -> int | None:
    """Resident set size in bytes: the RAM the process occupies now."""
    try:
        return psutil.Process().memory_info().rss
    except psutil.Error:
        return None


def read_peak_rss() -> PeakRss | None:
    """The highest RSS the process ever reached, from `getrusage(RUSAGE_SELF).ru_maxrss`.

    Linux and the BSDs count KiB; macOS counts bytes.
    """
    if resource is None:
        return None
    raw = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":
        return PeakRss(bytes=raw, raw=raw, unit="B")
    return PeakRss(bytes=raw * 1024, raw=raw, unit="KiB")


def read_smaps_rollup(path: Path = PROC_SELF / "smaps_rollup") -> SmapsRollup | None:
    """The kernel's `Rss:` total from `smaps_rollup` (Linux 4.14+), or `None` elsewhere."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return parse_smaps_rollup(text)


def parse_smaps_rollup(text: str) -> SmapsRollup:
    """Find the `Rss:` line; keep it whitespace-collapsed, as Qwen prints it."""
    for line in text.splitlines():
        fields = line.split()
        if fields[:1] == ["Rss:"]:
            collapsed = " ".join(fields)
            if len(fields) == 3 and fields[1].isdigit() and fields[2] == "kB":
                return SmapsRollup(line=collapsed, bytes=int(fields[1]) * 1024)
            return SmapsRollup(line=collapsed, bytes=None)
    return SmapsRollup(line=f"parse error: {text[:SMAPS_PARSE_ERROR_CHARS]}", bytes=None)


def count_open_fds(fd_dir: Path = PROC_SELF / "fd") -> int | None:
    """Open file descriptors: the entries of `/proc/self/fd`, else psutil's count.

    Like Qwen's `readdir`, the `/proc` count includes the descriptor used to list it.
    """
    try:
        return len(os.listdir(fd_dir))
    except OSError:
        pass
    try:
        return psutil.Process().num_fds()
    except (AttributeError, psutil.Error):  # num_fds does not exist on Windows
        return None


def count_threads() -> int | None:
    """OS threads in the process, including native threads Python did not start."""
    try:
        return psutil.Process().num_threads()
    except psutil.Error:
        return None


def read_create_time() -> float | None:
    """When the process started, in seconds since the epoch."""
    try:
        return psutil.Process().create_time()
    except psutil.Error:
        return None


def read_cpu_times() -> CpuTimes:
    times = os.times()
    return CpuTimes(user_seconds=times.user, system_seconds=times.system)


def read_free_disk(directory: Path) -> int:
    """Bytes an unprivileged writer may still use on the file system holding `directory`."""
    return shutil.disk_usage(directory).free


@dataclass(frozen=True)
class Probes:
    """One reader per raw measurement; replace any of them to stage a reading in a test."""

    clock: Callable[[], datetime] = utc_now
    rss: Callable[[], int | None] = read_rss
    peak_rss: Callable[[], PeakRss | None] = read_peak_rss
    smaps_rollup: Callable[[], SmapsRollup | None] = read_smaps_rollup
    open_fds: Callable[[], int | None] = count_open_fds
    threads: Callable[[], int | None] = count_threads
    create_time: Callable[[], float | None] = read_create_time
    cpu_times: Callable[[], CpuTimes] = read_cpu_times
    cgroup_limit: Callable[[], MemoryLimit | None] = read_cgroup_memory_limit
    physical_memory: Callable[[], PhysicalMemory | None] = read_physical_memory
    gc_state: Callable[[], GcState] = read_gc_state
    gc_objects: Callable[[], int] = count_tracked_objects
    tracemalloc_state: Callable[[int], TracemallocState] = read_tracemalloc_state
    free_disk: Callable[[Path], int] = read_free_disk


DEFAULT_PROBES = Probes()
