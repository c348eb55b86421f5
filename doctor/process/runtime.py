"""Readings from the Python runtime itself: the garbage collector and tracemalloc.

These are the Python counterparts of Qwen's V8 heap statistics. They answer "are objects
piling up?" rather than "how big is the process?", which the OS readings answer.
"""

from __future__ import annotations

import gc
import tracemalloc

from doctor.process.model import AllocationSite, GcGeneration, GcState, TracemallocState

TOP_ALLOCATION_SITES = 10

# Allocations made by tracemalloc and the import machinery say nothing about the host's
# history; leaving them out keeps the top sites about the program.
NOISE_FILTERS = (
    tracemalloc.Filter(False, tracemalloc.__file__),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
    tracemalloc.Filter(False, "<unknown>"),
)


def read_gc_state() -> GcState:
    """The collector's switches and counters, plus a count of the objects it tracks.

    Counting tracked objects builds a list as long as the object count (8 bytes each), so it
    costs a few milliseconds per million objects; everything else here is free.
    """
    return GcState(
        enabled=gc.isenabled(),
        counts=gc.get_count(),
        thresholds=gc.get_threshold(),
        garbage=len(gc.garbage),
        tracked_objects=count_tracked_objects(),
        generations=tuple(
            GcGeneration(
                collections=stats["collections"],
                collected=stats["collected"],
                uncollectable=stats["uncollectable"],
            )
            for stats in gc.get_stats()
        ),
    )


def count_tracked_objects() -> int:
    """How many container objects the cyclic collector currently tracks."""
    return len(gc.get_objects())


def read_tracemalloc_state(top: int = TOP_ALLOCATION_SITES) -> TracemallocState:
    """Traced memory now and at its peak, and the `top` source lines holding the most of it.

    The top sites need a snapshot of every trace, so they are only listed while tracing is
    on; when it is off the sizes are zero and there are no sites.
    """
    tracing = tracemalloc.is_tracing()
    current, peak = tracemalloc.get_traced_memory()
    return TracemallocState(
        tracing=tracing,
        current=current,
        peak=peak,
        frames=tracemalloc.get_traceback_limit(),
        overhead=tracemalloc.get_tracemalloc_memory(),
        top_sites=top_allocation_sites(top) if tracing and top > 0 else (),
    )


def top_allocation_sites(top: int) -> tuple[AllocationSite, ...]:
    """The source lines that hold the most traced memory right now, biggest first."""
    snapshot = tracemalloc.take_snapshot().filter_traces(NOISE_FILTERS)
    return tuple(
        AllocationSite(
            location=f"{stat.traceback[0].filename}:{stat.traceback[0].lineno}",
            bytes=stat.size,
            count=stat.count,
        )
        for stat in snapshot.statistics("lineno")[:top]
    )
