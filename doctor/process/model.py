"""Frozen records of one look at the running Python process.

Every record renders itself with `to_dict()` under stable camelCase keys, so the JSON report
reads like Qwen's `/doctor memory --json` and does not change when a field is renamed here.
Sizes are bytes, times are seconds; `None` means the platform could not tell.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PeakRss:
    """The high-water mark of resident memory from `getrusage`.

    Linux reports `ru_maxrss` in KiB and macOS in bytes; `raw` and `unit` keep what the kernel
    said. `bytes` is that in bytes, raised to the RSS read with it when the kernel's mark
    lagged behind (see `doctor.process.collect.at_least`): a peak is never below the current.
    """

    bytes: int
    raw: int
    unit: str

    def to_dict(self) -> dict:
        return {"bytes": self.bytes, "raw": self.raw, "unit": self.unit}


@dataclass(frozen=True)
class SmapsRollup:
    """The `Rss:` line of `/proc/self/smaps_rollup`: the kernel's own resident total.

    `line` is the line with its whitespace collapsed (`Rss: 5000 kB`), as Qwen shows it, or
    `parse error: <first 80 chars>` when the file has no such line; `bytes` is then `None`.
    """

    line: str
    bytes: int | None

    def to_dict(self) -> dict:
        return {"rssLine": self.line, "rssBytes": self.bytes}


@dataclass(frozen=True)
class MemoryLimit:
    """The ceiling the process would be killed or swapped at, and where it comes from.

    `source` is `cgroup v2`, `cgroup v1` or `physical memory`.
    """

    bytes: int
    source: str

    def to_dict(self) -> dict:
        return {"bytes": self.bytes, "source": self.source}


@dataclass(frozen=True)
class PhysicalMemory:
    """Machine RAM as psutil sees it (the host's, even inside a container)."""

    total: int
    available: int

    def to_dict(self) -> dict:
        return {"total": self.total, "available": self.available}


@dataclass(frozen=True)
class CpuTimes:
    """CPU seconds spent in user and kernel mode since the process started."""

    user_seconds: float
    system_seconds: float

    def to_dict(self) -> dict:
        return {"userSeconds": self.user_seconds, "systemSeconds": self.system_seconds}


@dataclass(frozen=True)
class GcGeneration:
    """`gc.get_stats()` for one generation: how often it ran and what it freed."""

    collections: int
    collected: int
    uncollectable: int

    def to_dict(self) -> dict:
        return {
            "collections": self.collections,
            "collected": self.collected,
            "uncollectable": self.uncollectable,
        }


@dataclass(frozen=True)
class GcState:
    """The cyclic garbage collector: whether it runs, its counters, what it could not free.

    `garbage` is `len(gc.garbage)`: objects the collector found unreachable but could not free
    (or kept because of `gc.DEBUG_SAVEALL`). `tracked_objects` is `len(gc.get_objects())`,
    the containers the collector knows about, a rough proxy for "Python objects alive".
    """

    enabled: bool
    counts: tuple[int, ...]
    thresholds: tuple[int, ...]
    garbage: int
    tracked_objects: int
    generations: tuple[GcGeneration, ...]

    def to_dict(self) -> dict:
        return {
            "enabled": self.enabled,
            "counts": list(self.counts),
            "thresholds": list(self.thresholds),
            "garbage": self.garbage,
            "trackedObjects": self.tracked_objects,
            "stats": [generation.to_dict() for generation in self.generations],
        }


@dataclass(frozen=True)
class AllocationSite:
    """One source line and the memory still allocated from it, per tracemalloc."""

    location: str
    bytes: int
    count: int

    def to_dict(self) -> dict:
        return {"location": self.location, "bytes": self.bytes, "count": self.count}


@dataclass(frozen=True)
class TracemallocState:
    """What tracemalloc knows, which is only what was allocated since it started tracing.

    `overhead` is the memory tracemalloc itself spends storing traces; a snapshot file is of
    the same order, which is why the snapshot disk check is based on it.
    """

    tracing: bool
    current: int
    peak: int
    frames: int
    overhead: int
    top_sites: tuple[AllocationSite, ...]

    def to_dict(self) -> dict:
        return {
            "tracing": self.tracing,
            "current": self.current,
            "peak": self.peak,
            "frames": self.frames,
            "overhead": self.overhead,
            "topSites": [site.to_dict() for site in self.top_sites],
        }


@dataclass(frozen=True)
class DeepSize:
    """The pympler `asizeof` size of a history, shared objects counted once.

    `complete` is false when the measurement was cancelled; `bytes` then covers the first
    `items_sized` of `items_total` entries.
    """

    bytes: int
    items_sized: int
    items_total: int
    seconds: float
    complete: bool

    def to_dict(self) -> dict:
        return {
            "bytes": self.bytes,
            "itemsSized": self.items_sized,
            "itemsTotal": self.items_total,
            "seconds": self.seconds,
            "complete": self.complete,
        }


@dataclass(frozen=True)
class TypeSummaryRow:
    """One line of pympler's per-type summary of every object in the process."""

    type_name: str
    count: int
    bytes: int

    def to_dict(self) -> dict:
        return {"type": self.type_name, "count": self.count, "bytes": self.bytes}


@dataclass(frozen=True)
class HistoryFootprint:
    """What the live history held by the host costs, as far as it was measured."""

    entries: int | None
    deep_size: DeepSize | None

    def to_dict(self) -> dict:
        return {
            "entries": self.entries,
            "deepSize": self.deep_size.to_dict() if self.deep_size else None,
        }


@dataclass(frozen=True)
class MemorySample:
    """One of the `--sample` readings, taken `interval` seconds after the previous one."""

    index: int
    timestamp: str
    rss: int | None
    traced_current: int | None
    gc_objects: int

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "timestamp": self.timestamp,
            "rss": self.rss,
            "tracedCurrent": self.traced_current,
            "gcObjects": self.gc_objects,
        }


@dataclass(frozen=True)
class SampleSeries:
    """Readings a second apart and how much each measure moved from the first to the last.

    A delta is `None` with fewer than two samples or when either end could not be read.
    """

    samples: tuple[MemorySample, ...]
    rss_delta: int | None
    traced_delta: int | None
    gc_objects_delta: int | None

    def to_dict(self) -> dict:
        return {
            "sampleCount": len(self.samples),
            "rssDelta": self.rss_delta,
            "tracedDelta": self.traced_delta,
            "gcObjectsDelta": self.gc_objects_delta,
            "samples": [sample.to_dict() for sample in self.samples],
        }


@dataclass(frozen=True)
class Risk:
    """A leak or pressure indicator: a stable `type` key and a sentence for people."""

    type: str
    message: str

    def to_dict(self) -> dict:
        return {"type": self.type, "message": self.message}


@dataclass(frozen=True)
class Analysis:
    """The risks found and Qwen's one-line verdict on them."""

    risks: tuple[Risk, ...]
    recommendation: str

    def to_dict(self) -> dict:
        return {
            "risks": [risk.to_dict() for risk in self.risks],
            "recommendation": self.recommendation,
        }


@dataclass(frozen=True)
class ProcessDiagnostics:
    """Everything `doctor memory --self` says about the Python process, plus its verdict."""

    timestamp: str
    pid: int
    python_version: str
    python_implementation: str
    platform: str
    machine: str
    uptime_seconds: float | None
    rss: int | None
    peak_rss: PeakRss | None
    smaps_rollup: SmapsRollup | None
    memory_limit: MemoryLimit | None
    cgroup_limit: MemoryLimit | None
    physical_memory: PhysicalMemory | None
    cpu: CpuTimes
    open_file_descriptors: int | None
    threads: int | None
    python_threads: int
    gc: GcState
    tracemalloc: TracemallocState
    history: HistoryFootprint | None
    type_summary: tuple[TypeSummaryRow, ...] | None
    samples: SampleSeries | None
    analysis: Analysis

    def to_dict(self) -> dict:
        def optional(record):
            return record.to_dict() if record is not None else None

        return {
            "timestamp": self.timestamp,
            "pid": self.pid,
            "pythonVersion": self.python_version,
            "pythonImplementation": self.python_implementation,
            "platform": self.platform,
            "machine": self.machine,
            "uptimeSeconds": self.uptime_seconds,
            "memory": {
                "rss": self.rss,
                "peakRss": optional(self.peak_rss),
                "smapsRollup": optional(self.smaps_rollup),
                "limit": optional(self.memory_limit),
                "cgroupLimit": optional(self.cgroup_limit),
                "physical": optional(self.physical_memory),
            },
            "cpu": self.cpu.to_dict(),
            "openFileDescriptors": self.open_file_descriptors,
            "threads": self.threads,
            "pythonThreads": self.python_threads,
            "gc": self.gc.to_dict(),
            "tracemalloc": self.tracemalloc.to_dict(),
            "history": optional(self.history),
            "typeSummary": (
                [row.to_dict() for row in self.type_summary]
                if self.type_summary is not None
                else None
            ),
            "samples": optional(self.samples),
            "analysis": self.analysis.to_dict(),
        }
