"""Staged process readings, so rules can be tested on a process that only pretends to be big."""

import dataclasses
import tracemalloc
from datetime import datetime, timezone

import pytest

from doctor.process.model import (
    CpuTimes,
    GcState,
    PeakRss,
    PhysicalMemory,
    SmapsRollup,
    TracemallocState,
)
from doctor.process.probes import DEFAULT_PROBES

MIB = 1024 * 1024
GIB = 1024 * MIB
STAGED_NOW = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)

CALM_GC = GcState(
    enabled=True,
    counts=(1, 2, 3),
    thresholds=(700, 10, 10),
    garbage=0,
    tracked_objects=1000,
    generations=(),
)
TRACEMALLOC_OFF = TracemallocState(
    tracing=False, current=0, peak=0, frames=1, overhead=0, top_sites=()
)


@pytest.fixture
def stage():
    """Build a `Probes` bundle of a calm 100 MiB process on a 16 GiB machine, then override."""

    def staged(**overrides):
        calm = dict(
            clock=lambda: STAGED_NOW,
            rss=lambda: 100 * MIB,
            peak_rss=lambda: PeakRss(bytes=120 * MIB, raw=120 * 1024, unit="KiB"),
            smaps_rollup=lambda: SmapsRollup(line="Rss: 102400 kB", bytes=100 * MIB),
            open_fds=lambda: 12,
            threads=lambda: 4,
            create_time=lambda: STAGED_NOW.timestamp() - 60,
            cpu_times=lambda: CpuTimes(user_seconds=1.5, system_seconds=0.25),
            cgroup_limit=lambda: None,
            physical_memory=lambda: PhysicalMemory(total=16 * GIB, available=8 * GIB),
            gc_state=lambda: CALM_GC,
            gc_objects=lambda: 1000,
            tracemalloc_state=lambda top: TRACEMALLOC_OFF,
            free_disk=lambda directory: 100 * GIB,
        )
        calm.update(overrides)
        return dataclasses.replace(DEFAULT_PROBES, **calm)

    return staged


@pytest.fixture
def tracing_restored():
    """Leave tracemalloc as the test found it, whatever the code under test started."""
    was_tracing = tracemalloc.is_tracing()
    yield
    if not was_tracing and tracemalloc.is_tracing():
        tracemalloc.stop()
