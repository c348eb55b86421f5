"""Each risk rule fires at its threshold and not just below it, judged through collection."""

import dataclasses

import pytest

from doctor.process.collect import collect_process_diagnostics
from doctor.process.model import MemoryLimit, MemorySample, SampleSeries, TracemallocState
from doctor.process.risks import (
    MEMORY_PRESSURE_RATIO,
    OPEN_FD_THRESHOLD,
    RSS_GROWTH_MIN_BYTES,
    RSS_GROWTH_RATIO_FLOOR_BYTES,
    THREAD_THRESHOLD,
    TRACEMALLOC_PEAK_MIN_GAP_BYTES,
    recommendation,
)

MIB = 1024 * 1024
GIB = 1024 * MIB


def risk_types(probes, samples=None):
    diagnostics = collect_process_diagnostics(probes=probes, samples=samples)
    return [risk.type for risk in diagnostics.analysis.risks]


def series(*rss_values):
    samples = tuple(
        MemorySample(index=i, timestamp="t", rss=rss, traced_current=None, gc_objects=0)
        for i, rss in enumerate(rss_values, start=1)
    )
    return SampleSeries(
        samples=samples,
        rss_delta=rss_values[-1] - rss_values[0],
        traced_delta=None,
        gc_objects_delta=0,
    )


def test_a_calm_process_has_no_risks_and_qwens_all_clear(stage):
    diagnostics = collect_process_diagnostics(probes=stage())
    assert diagnostics.analysis.risks == ()
    assert diagnostics.analysis.recommendation == "No obvious leak indicators detected."


def test_recommendation_counts_indicators_in_qwens_words():
    assert recommendation(2) == "2 potential leak indicator(s) found."
    assert recommendation(0) == "No obvious leak indicators detected."


def test_memory_pressure_is_judged_against_the_cgroup_limit_when_it_is_tighter(stage):
    cgroup = MemoryLimit(bytes=4 * GIB, source="cgroup v2")
    at_threshold = int(4 * GIB * MEMORY_PRESSURE_RATIO)
    diagnostics = collect_process_diagnostics(
        probes=stage(rss=lambda: at_threshold, cgroup_limit=lambda: cgroup)
    )
    (risk,) = diagnostics.analysis.risks
    assert risk.type == "memory-pressure"
    assert risk.message == "RSS (3.00 GB) is 75.0% of the cgroup v2 limit (4.00 GB)."
    assert diagnostics.analysis.recommendation == "1 potential leak indicator(s) found."
    assert risk_types(stage(rss=lambda: at_threshold - 1, cgroup_limit=lambda: cgroup)) == []


def test_memory_pressure_falls_back_to_physical_memory(stage):
    assert risk_types(stage(rss=lambda: 12 * GIB)) == ["memory-pressure"]
    assert risk_types(stage(rss=lambda: None)) == []


def test_rss_growth_of_64_mib_is_a_risk_whatever_the_share(stage):
    start = 4 * GIB
    assert risk_types(stage(), series(start, start + RSS_GROWTH_MIN_BYTES)) == ["rss-growth"]
    assert risk_types(stage(), series(start, start + RSS_GROWTH_MIN_BYTES - 1)) == []


def test_rss_growth_of_20_percent_is_a_risk_above_the_noise_floor(stage):
    assert risk_types(stage(), series(50 * MIB, 55 * MIB, 60 * MIB)) == ["rss-growth"]
    assert risk_types(stage(), series(50 * MIB, 59 * MIB)) == []  # 18%
    small = 10 * MIB
    assert risk_types(stage(), series(small, small + RSS_GROWTH_RATIO_FLOOR_BYTES - 1)) == []


def test_rss_growth_message_names_the_growth_and_the_sample_count(stage):
    diagnostics = collect_process_diagnostics(probes=stage(), samples=series(100 * MIB, 150 * MIB, 200 * MIB))
    (risk,) = diagnostics.analysis.risks
    assert risk.message == "RSS grew by 100.0 MB (100.0%) over 3 samples."


def test_uncollectable_garbage_is_a_risk(stage):
    with_garbage = dataclasses.replace(stage().gc_state(), garbage=3)
    diagnostics = collect_process_diagnostics(probes=stage(gc_state=lambda: with_garbage))
    assert [risk.to_dict() for risk in diagnostics.analysis.risks] == [
        {"type": "uncollectable-garbage", "message": "3 uncollectable object(s) in gc.garbage."}
    ]


def test_disabled_gc_is_a_risk(stage):
    disabled = dataclasses.replace(stage().gc_state(), enabled=False)
    assert risk_types(stage(gc_state=lambda: disabled)) == ["gc-disabled"]


@pytest.mark.parametrize(
    ("probe", "threshold", "risk_type"),
    [("open_fds", OPEN_FD_THRESHOLD, "fd-leak"), ("threads", THREAD_THRESHOLD, "thread-count")],
)
def test_counts_above_their_threshold_are_risks(stage, probe, threshold, risk_type):
    assert risk_types(stage(**{probe: lambda: threshold + 1})) == [risk_type]
    assert risk_types(stage(**{probe: lambda: threshold})) == []
    assert risk_types(stage(**{probe: lambda: None})) == []


def test_tracemalloc_peak_far_above_current_is_a_risk(stage):
    def traced(current, peak, tracing=True):
        state = TracemallocState(tracing=tracing, current=current, peak=peak, frames=1, overhead=0, top_sites=())
        return stage(tracemalloc_state=lambda top: state)

    gap = TRACEMALLOC_PEAK_MIN_GAP_BYTES
    assert risk_types(traced(gap, 2 * gap)) == ["tracemalloc-peak"]
    assert risk_types(traced(gap + 1, 2 * gap)) == []  # peak below 2x current
    assert risk_types(traced(0, gap - 1)) == []  # gap too small to matter
    assert risk_types(traced(gap, 2 * gap, tracing=False)) == []


def test_several_risks_are_all_reported_and_counted(stage):
    probes = stage(open_fds=lambda: 9999, threads=lambda: 9999)
    diagnostics = collect_process_diagnostics(probes=probes)
    assert [risk.type for risk in diagnostics.analysis.risks] == ["fd-leak", "thread-count"]
    assert diagnostics.analysis.recommendation == "2 potential leak indicator(s) found."
