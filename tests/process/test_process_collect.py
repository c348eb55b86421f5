"""Collection on the real test process, and its JSON shape."""

import json
import os
import sys
import tracemalloc

import pytest
from pympler import asizeof

from doctor.process.collect import collect_process_diagnostics
from doctor.process.probes import resource
from doctor.process.format import format_bytes
from doctor.report.process_lines import process_lines
from doctor.process.model import MemoryLimit

TOP_LEVEL_KEYS = [
    "timestamp",
    "pid",
    "pythonVersion",
    "pythonImplementation",
    "platform",
    "machine",
    "uptimeSeconds",
    "memory",
    "cpu",
    "openFileDescriptors",
    "threads",
    "pythonThreads",
    "gc",
    "tracemalloc",
    "history",
    "typeSummary",
    "samples",
    "analysis",
]


def test_real_collection_reads_this_process():
    diagnostics = collect_process_diagnostics()
    report = diagnostics.to_dict()
    assert list(report) == TOP_LEVEL_KEYS
    assert report["pid"] == os.getpid()
    assert report["pythonVersion"] == ".".join(map(str, sys.version_info[:3]))
    assert report["memory"]["rss"] > 0
    assert report["uptimeSeconds"] > 0
    assert report["gc"]["trackedObjects"] > 0
    assert len(report["gc"]["stats"]) == 3
    assert report["history"] is None and report["typeSummary"] is None
    assert report["analysis"]["recommendation"]
    json.dumps(report)  # plain JSON, no dataclasses or tuples left behind


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="procfs and KiB maxrss are Linux")
def test_linux_readings_name_their_units_and_sources():
    report = collect_process_diagnostics().to_dict()
    peak = report["memory"]["peakRss"]
    assert peak["unit"] == "KiB" and peak["bytes"] == max(peak["raw"] * 1024, report["memory"]["rss"])
    assert peak["bytes"] >= report["memory"]["rss"] // 2
    assert report["memory"]["smapsRollup"]["rssLine"].startswith("Rss: ")
    assert report["openFileDescriptors"] >= 3
    assert report["memory"]["limit"]["source"] in {"cgroup v1", "cgroup v2", "physical memory"}


def test_staged_readings_land_under_stable_keys(stage):
    report = collect_process_diagnostics(probes=stage()).to_dict()
    assert report["timestamp"] == "2025-01-02T03:04:05.678Z"
    assert report["uptimeSeconds"] == pytest.approx(60)
    assert report["memory"] == {
        "rss": 100 * 1024 * 1024,
        "peakRss": {"bytes": 120 * 1024 * 1024, "raw": 120 * 1024, "unit": "KiB"},
        "smapsRollup": {"rssLine": "Rss: 102400 kB", "rssBytes": 100 * 1024 * 1024},
        "limit": {"bytes": 16 * 1024**3, "source": "physical memory"},
        "cgroupLimit": None,
        "physical": {"total": 16 * 1024**3, "available": 8 * 1024**3},
    }
    assert report["cpu"] == {"userSeconds": 1.5, "systemSeconds": 0.25}
    assert report["gc"] == {
        "enabled": True,
        "counts": [1, 2, 3],
        "thresholds": [700, 10, 10],
        "garbage": 0,
        "trackedObjects": 1000,
        "stats": [],
    }
    assert report["tracemalloc"] == {
        "tracing": False,
        "current": 0,
        "peak": 0,
        "frames": 1,
        "overhead": 0,
        "topSites": [],
    }


def test_the_tighter_cgroup_limit_becomes_the_effective_limit(stage):
    cgroup = MemoryLimit(bytes=2 * 1024**3, source="cgroup v1")
    report = collect_process_diagnostics(probes=stage(cgroup_limit=lambda: cgroup)).to_dict()
    assert report["memory"]["limit"] == {"bytes": 2 * 1024**3, "source": "cgroup v1"}
    assert report["memory"]["cgroupLimit"] == report["memory"]["limit"]


def test_unreadable_probes_come_out_as_null(stage):
    probes = stage(
        rss=lambda: None,
        peak_rss=lambda: None,
        smaps_rollup=lambda: None,
        open_fds=lambda: None,
        threads=lambda: None,
        create_time=lambda: None,
        physical_memory=lambda: None,
    )
    report = collect_process_diagnostics(probes=probes).to_dict()
    assert report["memory"]["rss"] is None
    assert report["memory"]["limit"] is None
    assert report["uptimeSeconds"] is None
    assert report["openFileDescriptors"] is None


def test_history_is_counted_always_and_deep_sized_only_when_asked():
    shared = "x" * 5000
    history = [{"role": "user", "parts": [{"text": shared}]} for _ in range(4)]

    shallow = collect_process_diagnostics(history=history).to_dict()["history"]
    assert shallow == {"entries": 4, "deepSize": None}

    deep = collect_process_diagnostics(history=history, deep=True).to_dict()["history"]["deepSize"]
    assert deep["bytes"] == asizeof.asizeof(history)
    assert (deep["itemsSized"], deep["itemsTotal"], deep["complete"]) == (4, 4, True)


def test_type_summary_lists_the_biggest_types_when_asked():
    rows = collect_process_diagnostics(top_types=3).to_dict()["typeSummary"]
    assert len(rows) == 3
    assert [row["bytes"] for row in rows] == sorted((row["bytes"] for row in rows), reverse=True)
    assert set(rows[0]) == {"type", "count", "bytes"}


def test_top_allocation_sites_are_listed_while_tracing(tracing_restored):
    tracemalloc.start()
    hoard = [bytearray(4096) for _ in range(200)]  # noqa: F841 - kept alive on purpose
    report = collect_process_diagnostics().to_dict()["tracemalloc"]
    assert report["tracing"] is True
    assert 0 < len(report["topSites"]) <= 10
    assert any(site["location"].endswith(f"{os.path.basename(__file__)}:{hoard_line()}") for site in report["topSites"])
    assert report["current"] >= 200 * 4096


def hoard_line():
    """The line of the `bytearray` hoard above, found by reading this file."""
    with open(__file__, encoding="utf-8") as source:
        for number, line in enumerate(source, start=1):
            if "hoard = [bytearray" in line:
                return number
    raise AssertionError("hoard line not found")


@pytest.mark.skipif(resource is None, reason="no getrusage on this platform")
def test_peak_rss_is_never_below_rss_while_memory_grows():
    """The kernel's high-water mark lags its RSS counters: read right after an allocation it can
    be lower than the RSS read just before it (issue 15: "RSS 62.9 MiB, peak RSS 62.6 MiB").
    Whatever the kernel says, the report's peak is at least the RSS it reports."""
    for step in range(300):
        held = bytearray(1 << 20) if step % 3 else None  # a MiB touched and freed: RSS sits at its peak
        diagnostics = collect_process_diagnostics()
        assert diagnostics.peak_rss.bytes >= diagnostics.rss, f"step {step}"
        lines = dict(line.split(": ", 1) for line in process_lines(diagnostics)[1:] if ": " in line)
        assert lines["maxRSS"] == format_bytes(max(diagnostics.rss, diagnostics.peak_rss.bytes))
    del held
