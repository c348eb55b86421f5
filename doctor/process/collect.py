"""One look at the running Python process: the counterpart of Qwen's `collectMemoryDiagnostics`.

Used when doctor runs inside a Python agent host (`/doctor memory`) or on itself
(`doctor memory --self`). Everything cheap is always read; what walks the whole heap (the
deep size of the history, the per-type summary) only runs when asked.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from collections.abc import Sized
from dataclasses import replace

from doctor.process.deep import measure_deep_size, summarize_types
from doctor.process.format import format_iso_timestamp
from doctor.process.limits import effective_limit
from doctor.process.model import HistoryFootprint, PeakRss, ProcessDiagnostics, SampleSeries
from doctor.process.probes import DEFAULT_PROBES, Probes
from doctor.process.risks import analyze
from doctor.process.runtime import TOP_ALLOCATION_SITES


def collect_process_diagnostics(
    *,
    history: object = None,
    deep: bool = False,
    top_types: int = 0,
    samples: SampleSeries | None = None,
    probes: Probes = DEFAULT_PROBES,
) -> ProcessDiagnostics:
    """Read the process now and judge it.

    `history` is the host's live history, held by reference: its entry count is always
    reported, its pympler deep size only with `deep=True` (synchronously; use
    `deep_size_async` to keep a UI responsive). `top_types > 0` adds pympler's summary of the
    types holding the most memory. `samples` from `take_samples` adds the growth rule.
    """
    now = probes.clock()
    rss = probes.rss()
    create_time = probes.create_time()
    cgroup_limit = probes.cgroup_limit()
    physical_memory = probes.physical_memory()
    memory_limit = effective_limit(cgroup_limit, physical_memory)
    open_fds = probes.open_fds()
    threads = probes.threads()
    gc_state = probes.gc_state()
    tracemalloc_state = probes.tracemalloc_state(TOP_ALLOCATION_SITES)
    return ProcessDiagnostics(
        timestamp=format_iso_timestamp(now),
        pid=os.getpid(),
        python_version=platform.python_version(),
        python_implementation=platform.python_implementation(),
        platform=sys.platform,
        machine=platform.machine(),
        uptime_seconds=now.timestamp() - create_time if create_time is not None else None,
        rss=rss,
        peak_rss=at_least(probes.peak_rss(), rss),
        smaps_rollup=probes.smaps_rollup(),
        memory_limit=memory_limit,
        cgroup_limit=cgroup_limit,
        physical_memory=physical_memory,
        cpu=probes.cpu_times(),
        open_file_descriptors=open_fds,
        threads=threads,
        python_threads=threading.active_count(),
        gc=gc_state,
        tracemalloc=tracemalloc_state,
        history=_history_footprint(history, deep) if history is not None else None,
        type_summary=summarize_types(top_types) if top_types > 0 else None,
        samples=samples,
        analysis=analyze(
            rss=rss,
            memory_limit=memory_limit,
            open_file_descriptors=open_fds,
            threads=threads,
            gc=gc_state,
            tracemalloc=tracemalloc_state,
            samples=samples,
        ),
    )


def _history_footprint(history: object, deep: bool) -> HistoryFootprint:
    return HistoryFootprint(
        entries=len(history) if isinstance(history, Sized) else None,
        deep_size=measure_deep_size(history) if deep else None,
    )


def at_least(peak: PeakRss | None, rss: int | None) -> PeakRss | None:
    """The peak, never below the RSS reported beside it (`raw` keeps what the kernel said).

    Linux's high-water mark (`ru_maxrss`) lags the RSS `/proc` reports: read while the
    process sits at its peak it came out up to a few hundred KiB lower than the RSS read
    just before it, in a third of readings (a MiB allocated and freed between them).
    """
    if peak is None or rss is None or peak.bytes >= rss:
        return peak
    return replace(peak, bytes=rss)
