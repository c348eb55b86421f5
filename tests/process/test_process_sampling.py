"""`--sample`: three readings a second apart, and the deltas from first to last."""

import gc
import math
import tracemalloc

import pytest

from doctor.process.collect import collect_process_diagnostics
from doctor.process.model import TracemallocState
from doctor.process.sampling import take_samples

MIB = 1024 * 1024


def scripted(values):
    """A reader that returns the next scripted value on each call."""
    remaining = iter(values)
    return lambda *args: next(remaining)


def traced(current):
    return TracemallocState(tracing=True, current=current, peak=current, frames=1, overhead=0, top_sites=())


def test_three_samples_one_second_apart_with_first_to_last_deltas(stage):
    sleeps = []
    probes = stage(
        rss=scripted([100 * MIB, 130 * MIB, 180 * MIB]),
        gc_objects=scripted([1000, 1500, 4000]),
        tracemalloc_state=scripted([traced(10), traced(20), traced(35)]),
    )
    series = take_samples(sleep=sleeps.append, probes=probes)
    assert sleeps == [1.0, 1.0]  # no sleep after the last sample
    assert [sample.index for sample in series.samples] == [1, 2, 3]
    assert series.to_dict() == {
        "sampleCount": 3,
        "rssDelta": 80 * MIB,
        "tracedDelta": 25,
        "gcObjectsDelta": 3000,
        "samples": [
            {"index": 1, "timestamp": "2025-01-02T03:04:05.678Z", "rss": 100 * MIB, "tracedCurrent": 10, "gcObjects": 1000},
            {"index": 2, "timestamp": "2025-01-02T03:04:05.678Z", "rss": 130 * MIB, "tracedCurrent": 20, "gcObjects": 1500},
            {"index": 3, "timestamp": "2025-01-02T03:04:05.678Z", "rss": 180 * MIB, "tracedCurrent": 35, "gcObjects": 4000},
        ],
    }


def test_traced_memory_is_unknown_when_tracemalloc_is_off(stage):
    series = take_samples(sleep=lambda seconds: None, probes=stage())
    assert [sample.traced_current for sample in series.samples] == [None, None, None]
    assert series.traced_delta is None


@pytest.mark.parametrize(("count", "taken"), [(0, 3), (-1, 3), (math.nan, 3), (math.inf, 3), (2.9, 2), (1, 1)])
def test_sample_count_is_normalized_like_qwen(stage, count, taken):
    series = take_samples(count, sleep=lambda seconds: None, probes=stage())
    assert len(series.samples) == taken


def test_a_single_sample_has_no_deltas(stage):
    series = take_samples(1, sleep=lambda seconds: None, probes=stage())
    assert (series.rss_delta, series.traced_delta, series.gc_objects_delta) == (None, None, None)


def test_cancelling_keeps_the_samples_already_taken(stage):
    sleeps = []
    series = take_samples(
        5,
        sleep=sleeps.append,
        probes=stage(rss=scripted([1, 2, 3, 4, 5])),
        cancelled=lambda: len(sleeps) >= 2,
    )
    assert [sample.rss for sample in series.samples] == [1, 2]
    assert series.rss_delta == 1


def test_samples_feed_the_growth_rule_and_the_report(stage):
    series = take_samples(sleep=lambda seconds: None, probes=stage(rss=scripted([100 * MIB, 140 * MIB, 200 * MIB])))
    diagnostics = collect_process_diagnostics(probes=stage(), samples=series)
    assert diagnostics.to_dict()["samples"]["rssDelta"] == 100 * MIB
    assert [risk.type for risk in diagnostics.analysis.risks] == ["rss-growth"]


def test_real_sampling_sees_a_deliberate_allocation(tracing_restored):
    tracemalloc.start()
    hoard = []

    def allocate(seconds):
        hoard.append(bytearray(8 * MIB))
        hoard.extend([] for _ in range(500))  # lists are always tracked by the collector

    gc.collect()
    gc.disable()  # so a collection between samples cannot hide the new lists
    try:
        series = take_samples(2, interval=0, sleep=allocate)
    finally:
        gc.enable()
    assert series.traced_delta >= 8 * MIB
    assert series.gc_objects_delta >= 500
    assert series.samples[0].rss > 0
