"""Leak and pressure indicators for a Python process, in the spirit of Qwen's V8 rules.

Qwen flags V8 heap pressure, detached contexts, handle and descriptor counts and native
memory gaps. A Python process has no V8 heap, so the rules below look at what does matter
here: RSS against the limit the OOM killer enforces, RSS growth while sampling, objects the
collector cannot free, descriptor and thread counts, and allocation bursts seen by tracemalloc.
Each threshold is a named constant so a report can cite it and a test can sit on its edge.
"""

from __future__ import annotations

from doctor.process.format import format_bytes, format_percent
from doctor.process.model import (
    Analysis,
    GcState,
    MemoryLimit,
    Risk,
    SampleSeries,
    TracemallocState,
)

MIB = 1024 * 1024

# RSS at or above this share of the effective limit (cgroup or physical RAM) is pressure.
# Same ratio as Qwen's heap-pressure rule.
MEMORY_PRESSURE_RATIO = 0.75

# RSS growth from the first to the last sample is a risk at this many bytes...
RSS_GROWTH_MIN_BYTES = 64 * MIB
# ...or at this share of the first sample, provided it also grew by RSS_GROWTH_RATIO_FLOOR_BYTES:
# a 30 MiB interpreter that imports a module can grow 20% in a second and leak nothing.
RSS_GROWTH_RATIO = 0.20
RSS_GROWTH_RATIO_FLOOR_BYTES = 8 * MIB

# Same as Qwen's fd-leak rule.
OPEN_FD_THRESHOLD = 500

# Same as Qwen's active-handles threshold: threads are Python's long-lived handles.
THREAD_THRESHOLD = 256

# A tracemalloc peak this many times the current traced size, and at least
# TRACEMALLOC_PEAK_MIN_GAP_BYTES above it, means a burst was allocated and released; the
# allocator often keeps those pages, so RSS stays high after the burst.
TRACEMALLOC_PEAK_RATIO = 2.0
TRACEMALLOC_PEAK_MIN_GAP_BYTES = 64 * MIB


def analyze(
    *,
    rss: int | None,
    memory_limit: MemoryLimit | None,
    open_file_descriptors: int | None,
    threads: int | None,
    gc: GcState,
    tracemalloc: TracemallocState,
    samples: SampleSeries | None = None,
) -> Analysis:
    """Every risk that applies, and Qwen's verdict line on how many there are."""
    risks = [
        risk
        for risk in (
            memory_pressure_risk(rss, memory_limit),
            rss_growth_risk(samples),
            uncollectable_garbage_risk(gc),
            gc_disabled_risk(gc),
            fd_risk(open_file_descriptors),
            thread_risk(threads),
            tracemalloc_peak_risk(tracemalloc),
        )
        if risk is not None
    ]
    return Analysis(risks=tuple(risks), recommendation=recommendation(len(risks)))


def recommendation(risk_count: int) -> str:
    """Qwen's wording, word for word."""
    if risk_count > 0:
        return f"{risk_count} potential leak indicator(s) found."
    return "No obvious leak indicators detected."


def memory_pressure_risk(rss: int | None, limit: MemoryLimit | None) -> Risk | None:
    if rss is None or limit is None or limit.bytes <= 0:
        return None
    ratio = rss / limit.bytes
    if ratio < MEMORY_PRESSURE_RATIO:
        return None
    return Risk(
        "memory-pressure",
        f"RSS ({format_bytes(rss)}) is {format_percent(ratio)} of the "
        f"{limit.source} limit ({format_bytes(limit.bytes)}).",
    )


def rss_growth_risk(samples: SampleSeries | None) -> Risk | None:
    if samples is None or samples.rss_delta is None:
        return None
    growth = samples.rss_delta
    first = samples.samples[0].rss
    ratio = growth / first if first else None
    grew_a_lot = growth >= RSS_GROWTH_MIN_BYTES
    grew_a_share = (
        ratio is not None
        and ratio >= RSS_GROWTH_RATIO
        and growth >= RSS_GROWTH_RATIO_FLOOR_BYTES
    )
    if not (grew_a_lot or grew_a_share):
        return None
    return Risk(
        "rss-growth",
        f"RSS grew by {format_bytes(growth)} ({format_percent(ratio)}) "
        f"over {len(samples.samples)} samples.",
    )


def uncollectable_garbage_risk(gc: GcState) -> Risk | None:
    if gc.garbage == 0:
        return None
    return Risk(
        "uncollectable-garbage",
        f"{gc.garbage} uncollectable object(s) in gc.garbage.",
    )


def gc_disabled_risk(gc: GcState) -> Risk | None:
    if gc.enabled:
        return None
    return Risk(
        "gc-disabled",
        "Automatic garbage collection is disabled; reference cycles are never freed.",
    )


def fd_risk(open_file_descriptors: int | None) -> Risk | None:
    if open_file_descriptors is None or open_file_descriptors <= OPEN_FD_THRESHOLD:
        return None
    return Risk("fd-leak", f"{open_file_descriptors} open file descriptor(s) detected.")


def thread_risk(threads: int | None) -> Risk | None:
    if threads is None or threads <= THREAD_THRESHOLD:
        return None
    return Risk("thread-count", f"{threads} thread(s) running.")


def tracemalloc_peak_risk(state: TracemallocState) -> Risk | None:
    if not state.tracing:
        return None
    gap = state.peak - state.current
    if gap < TRACEMALLOC_PEAK_MIN_GAP_BYTES or state.peak < state.current * TRACEMALLOC_PEAK_RATIO:
        return None
    return Risk(
        "tracemalloc-peak",
        f"Traced memory peaked at {format_bytes(state.peak)}, more than "
        f"{TRACEMALLOC_PEAK_RATIO:g}\u00d7 the current {format_bytes(state.current)}; "
        "freed memory may not have been returned to the OS.",
    )
