"""`--sample`: a few cheap readings a second apart, to see whether memory is still climbing.

One reading says how big the process is; three say whether it is growing. Qwen takes three
samples 1000 ms apart and reports the first-to-last delta; so does this.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from doctor.process.format import format_iso_timestamp
from doctor.process.model import MemorySample, SampleSeries
from doctor.process.probes import DEFAULT_PROBES, Probes

DEFAULT_SAMPLE_COUNT = 3
DEFAULT_INTERVAL_SECONDS = 1.0


def take_samples(
    count: float = DEFAULT_SAMPLE_COUNT,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    *,
    probes: Probes = DEFAULT_PROBES,
    cancelled: Callable[[], bool] = lambda: False,
) -> SampleSeries:
    """Read RSS, traced memory and tracked objects `count` times, `interval` seconds apart.

    A `count` that is not a positive finite number means the default, and fractions round
    down, as in Qwen. When `cancelled()` turns true the series stops early and keeps the
    samples already taken; there is no sleep after the last sample.
    """
    wanted = _normalize_count(count)
    samples: list[MemorySample] = []
    for index in range(1, wanted + 1):
        if cancelled():
            break
        tracemalloc = probes.tracemalloc_state(0)
        samples.append(
            MemorySample(
                index=index,
                timestamp=format_iso_timestamp(probes.clock()),
                rss=probes.rss(),
                traced_current=tracemalloc.current if tracemalloc.tracing else None,
                gc_objects=probes.gc_objects(),
            )
        )
        if index < wanted and not cancelled():
            sleep(interval)
    return SampleSeries(
        samples=tuple(samples),
        rss_delta=_delta(samples, lambda sample: sample.rss),
        traced_delta=_delta(samples, lambda sample: sample.traced_current),
        gc_objects_delta=_delta(samples, lambda sample: sample.gc_objects),
    )


def _normalize_count(count: float) -> int:
    if not math.isfinite(count) or count <= 0:
        return DEFAULT_SAMPLE_COUNT
    return max(1, math.floor(count))


def _delta(
    samples: list[MemorySample], measure: Callable[[MemorySample], int | None]
) -> int | None:
    if len(samples) < 2:
        return None
    first, last = measure(samples[0]), measure(samples[-1])
    if first is None or last is None:
        return None
    return last - first
