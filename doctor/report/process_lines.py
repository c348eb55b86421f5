"""The Python process section: the counterpart of Qwen's `formatCoreDiagnostics` lines.

Same shape as Qwen's Node section (a title, `key: value` lines, `risks:` with
`  - type: message` items or `  none`, then `recommendation: …`), with Python's
measures in place of V8's. Byte counts go through Qwen's own formatter
(`doctor.process.format.format_bytes`), so "41.9 MB" reads the same in both tools.
"""

from __future__ import annotations

from doctor.process.format import (
    UNAVAILABLE,
    format_byte_delta,
    format_bytes,
    format_cpu_seconds,
    format_uptime,
)
from doctor.process.model import ProcessDiagnostics
from doctor.report.figures import figure

TITLE = "Memory Diagnostics (Python process)"


def _or_unavailable(value: object) -> str:
    return UNAVAILABLE if value is None else str(value)


def _limit(limit) -> str:
    return UNAVAILABLE if limit is None else f"{format_bytes(limit.bytes)} ({limit.source})"


def _gc(diagnostics: ProcessDiagnostics) -> list[str]:
    gc = diagnostics.gc
    counts = "/".join(str(c) for c in gc.counts)
    thresholds = "/".join(str(t) for t in gc.thresholds)
    collections = "/".join(str(g.collections) for g in gc.generations)
    uncollectable = sum(g.uncollectable for g in gc.generations)
    return [
        f"gcEnabled: {'yes' if gc.enabled else 'no'}",
        f"gcCounts: {counts} (thresholds {thresholds})",
        f"gcCollections: {collections}",
        f"gcUncollectable: {uncollectable}",
        f"gcGarbage: {gc.garbage}",
        f"gcTrackedObjects: {figure(gc.tracked_objects)}",
    ]


def _tracemalloc(diagnostics: ProcessDiagnostics) -> list[str]:
    traced = diagnostics.tracemalloc
    if not traced.tracing:
        return ["tracemalloc: not tracing (start Python with -X tracemalloc or PYTHONTRACEMALLOC=1)"]
    lines = [(f"tracemalloc: current {format_bytes(traced.current)}, peak {format_bytes(traced.peak)}, "
              f"{traced.frames} frame(s)")]
    if traced.top_sites:
        lines.append("tracemallocTopSites:")
        lines.extend(f"  - {site.location}: {format_bytes(site.bytes)} in {figure(site.count)} block(s)"
                     for site in traced.top_sites)
    return lines


def _history(diagnostics: ProcessDiagnostics) -> list[str]:
    history = diagnostics.history
    if history is None:
        return []
    lines = [f"historyEntries: {_or_unavailable(history.entries)}"]
    deep = history.deep_size
    if deep is not None:
        partial = "" if deep.complete else f" (partial: {deep.items_sized} of {deep.items_total} entries)"
        lines.append(f"historyDeepSize: {format_bytes(deep.bytes)}{partial}")
    return lines


def _types(diagnostics: ProcessDiagnostics) -> list[str]:
    if not diagnostics.type_summary:
        return []
    return ["typeSummary:"] + [f"  - {row.type_name}: {format_bytes(row.bytes)} in {figure(row.count)} object(s)"
                               for row in diagnostics.type_summary]


def _samples(diagnostics: ProcessDiagnostics) -> list[str]:
    series = diagnostics.samples
    if series is None:
        return []
    objects = UNAVAILABLE if series.gc_objects_delta is None else f"{series.gc_objects_delta:+,}"
    return [
        f"samples: {len(series.samples)}",
        f"rssDelta: {format_byte_delta(series.rss_delta)}",
        f"tracedDelta: {format_byte_delta(series.traced_delta)}",
        f"gcObjectsDelta: {objects}",
    ]


def process_lines(diagnostics: ProcessDiagnostics) -> list[str]:
    """The section as lines, in Qwen's order where a measure has a Node counterpart."""
    peak = diagnostics.peak_rss
    smaps = diagnostics.smaps_rollup
    uptime = diagnostics.uptime_seconds
    lines = [
        TITLE,
        f"timestamp: {diagnostics.timestamp}",
        f"pid: {diagnostics.pid}",
        (f"python: {diagnostics.python_implementation} {diagnostics.python_version} "
         f"({diagnostics.platform}, {diagnostics.machine})"),
        f"uptimeSeconds: {UNAVAILABLE if uptime is None else format_uptime(uptime)}",
        f"rss: {format_bytes(diagnostics.rss)}",
        f"maxRSS: {format_bytes(peak.bytes if peak else None)}",
        f"memoryLimit: {_limit(diagnostics.memory_limit)}",
        f"userCPUTime: {format_cpu_seconds(diagnostics.cpu.user_seconds)}",
        f"systemCPUTime: {format_cpu_seconds(diagnostics.cpu.system_seconds)}",
        f"threads: {_or_unavailable(diagnostics.threads)} ({diagnostics.python_threads} Python)",
        f"openFileDescriptors: {_or_unavailable(diagnostics.open_file_descriptors)}",
        f"smapsRollup: {UNAVAILABLE if smaps is None else smaps.line}",
        *_gc(diagnostics),
        *_tracemalloc(diagnostics),
        *_history(diagnostics),
        *_types(diagnostics),
        *_samples(diagnostics),
        "risks:",
    ]
    risks = diagnostics.analysis.risks
    lines.extend([f"  - {risk.type}: {risk.message}" for risk in risks] if risks else ["  none"])
    lines.append(f"recommendation: {diagnostics.analysis.recommendation}")
    return lines
