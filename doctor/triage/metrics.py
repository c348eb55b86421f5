"""The triage database as metrics: OpenMetrics text for Prometheus or a textfile collector, and OTLP/HTTP.

Per-tool histograms of injected chars and tokens, with the attributes agent, agent_version,
tool, tool_type, layer and oversized; sessions per agent version; files skipped. Cardinality
is bounded: only the `max_tools` tools with the most injected context keep their name, the
rest are reported as tool="other", and label values are made inert and cut to 120 characters. The figures
are aggregated by DuckDB once; the OTLP export builds the data points from those aggregates
and hands them to the official exporter (nothing is re-recorded value by value).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

from doctor.report.inert import inert_line
from doctor.triage.bins import BOUNDS, bin_sql

ATTRIBUTES = ("agent", "agent_version", "tool", "tool_type", "layer", "oversized")
DEFAULT_MAX_TOOLS = 50
VALUE_CHARS = 120
OTHER = "other"


@dataclass
class Series:
    """One histogram series: per-bucket counts (the last one above every bound), sum, count, min, max."""

    attributes: dict
    buckets: list[int] = field(default_factory=lambda: [0] * (len(BOUNDS) + 1))
    sum: float = 0.0
    count: int = 0
    min: float = math.inf
    max: float = -math.inf


@dataclass
class Aggregate:
    chars: list[Series]
    tokens: list[Series]
    sessions: list[tuple[dict, int]]
    files_skipped: int
    start_unix_nano: int
    instance_id: str = ""  # service.instance.id: the same for every export of one database


def _value(text) -> str:
    """A label value: a tool name is a model's or an MCP server's text, so its controls are made visible
    (an OSC 52 in a label would write the clipboard of whoever `cat`s the file), then cut."""
    return inert_line(text)[:VALUE_CHARS]


def _series(db, column: str, max_tools: int) -> list[Series]:
    rows = db.execute(f"""
        WITH kept AS (SELECT tool FROM counted_results GROUP BY tool ORDER BY sum(injected_chars) DESC, tool LIMIT ?)
        SELECT s.agent, coalesce(s.agent_version, ''),
               CASE WHEN r.tool IN (SELECT tool FROM kept) THEN r.tool ELSE '{OTHER}' END AS tool_name,
               r.tool_type, r.layer, r.oversized, {bin_sql('r.' + column)} AS bucket,
               count(*), sum(r.{column}), min(r.{column}), max(r.{column})
        FROM counted_results r JOIN counted_sessions s USING (session_key)
        GROUP BY ALL ORDER BY ALL""", [max_tools]).fetchall()
    series: dict[tuple, Series] = {}
    for agent, version, tool, tool_type, layer, oversized, bucket, count, total, low, high in rows:
        attributes = {"agent": _value(agent), "agent_version": _value(version), "tool": _value(tool),
                      "tool_type": tool_type, "layer": layer, "oversized": bool(oversized)}
        key = tuple(attributes.values())
        entry = series.get(key) or series.setdefault(key, Series(attributes))
        entry.buckets[bucket] += count
        entry.sum += total
        entry.count += count
        entry.min = min(entry.min, low)
        entry.max = max(entry.max, high)
    return list(series.values())


def aggregate(store, max_tools: int = DEFAULT_MAX_TOOLS) -> Aggregate:
    db = store.db
    started = db.execute("SELECT min(epoch_ns(started_at)) FROM scans").fetchone()[0]
    return Aggregate(
        chars=_series(db, "injected_chars", max_tools),
        tokens=_series(db, "tokens", max_tools),
        sessions=[({"agent": _value(agent), "agent_version": _value(version)}, count) for agent, version, count in
                  db.execute("SELECT agent, coalesce(agent_version, ''), count(*) FROM counted_sessions "
                             "GROUP BY ALL ORDER BY ALL").fetchall()],
        files_skipped=db.execute("SELECT count(*) FROM files WHERE status = 'skipped'").fetchone()[0],
        start_unix_nano=int(started) if started is not None else time.time_ns(),
        instance_id=instance_id(store.path),
    )


def instance_id(database) -> str:
    """The OTLP `service.instance.id` of a database: a UUID derived from its resolved path, the same on
    every run. The data points are cumulative from the first scan's start, so each export continues the
    series of the one before (a random id per run started new series every time). Cumulative rather than
    delta: the database holds totals, not the change since the last export, and a backend can rate() them."""
    import uuid
    from pathlib import Path

    return str(uuid.uuid5(uuid.NAMESPACE_URL, Path(database).resolve().as_uri()))


# -- OpenMetrics text (what Prometheus scrapes, and node_exporter's textfile collector reads)

def _label(value) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(attributes: dict, extra: tuple = ()) -> str:
    pairs = [*attributes.items(), *extra]
    return "{" + ",".join(f'{name}="{_label(value)}"' for name, value in pairs) + "}" if pairs else ""


def _number(value: float) -> str:
    """OpenMetrics' canonical form: `+Inf`, a whole number as an integer, else Python's shortest float."""
    if value == math.inf:
        return "+Inf"
    return repr(int(value)) if float(value).is_integer() else repr(float(value))


def _histogram_text(name: str, help_text: str, series: list[Series]) -> list[str]:
    lines = [f"# TYPE {name} histogram", f"# HELP {name} {help_text}"]
    for entry in series:
        running = 0
        for bound, count in zip((*BOUNDS, math.inf), entry.buckets):
            running += count
            le = "+Inf" if bound == math.inf else repr(float(bound))  # `le` as a float: 1.0, 3.0, 10.0 …
            lines.append(f"{name}_bucket{_labels(entry.attributes, (('le', le),))} {running}")
        lines.append(f"{name}_count{_labels(entry.attributes)} {entry.count}")
        lines.append(f"{name}_sum{_labels(entry.attributes)} {_number(entry.sum)}")
    return lines


def openmetrics_text(agg: Aggregate) -> str:
    """The aggregates in the OpenMetrics text format (ending `# EOF`). Prometheus' older text format
    reads it too (`# EOF` is a comment there), so promtool and textfile collectors accept the same file."""
    lines = [
        *_histogram_text("doctor_tool_result_chars", "Injected chars of each tool result in the triage database.",
                         agg.chars),
        *_histogram_text("doctor_tool_result_tokens", "Estimated tokens (chars / 4) of each tool result.", agg.tokens),
        "# TYPE doctor_sessions gauge", "# HELP doctor_sessions Sessions in the triage database.",
        *(f"doctor_sessions{_labels(attributes)} {count}" for attributes, count in agg.sessions),
        "# TYPE doctor_files_skipped gauge",
        "# HELP doctor_files_skipped Files the scans could not read as sessions or reports.",
        f"doctor_files_skipped {agg.files_skipped}",
        "# EOF",
    ]
    return "\n".join(lines) + "\n"


def write_textfile(path, text: str) -> None:
    """Write atomically (doctor/safety/writes.py: a new file renamed over the target, never through a
    link), as textfile collectors expect. Mode 0644: the collector runs as another user, and the file
    names tools and versions, no paths."""
    from doctor.safety.writes import replace

    replace(path, text, mode=0o644)


# -- OTLP/HTTP

def otlp_endpoint(url: str) -> str:
    """The metrics endpoint: a bare collector address gets OTLP/HTTP's `/v1/metrics` path. ExportError for
    what is not an http(s) URL with a host (a typo must be a usage error, not an exporter's traceback)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError as exc:
        raise ExportError(f"--otlp {url!r}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ExportError(f"--otlp {url!r}: expected an http:// or https:// URL with a host, "
                          "e.g. http://127.0.0.1:4318")
    return url.rstrip("/") + "/v1/metrics" if parts.path in ("", "/") else url


def metrics_data(agg: Aggregate):
    from opentelemetry.sdk.metrics.export import (
        AggregationTemporality,
        Histogram,
        HistogramDataPoint,
        Metric,
        MetricsData,
        NumberDataPoint,
        ResourceMetrics,
        ScopeMetrics,
        Sum,
    )
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from doctor import __version__

    now, start = time.time_ns(), agg.start_unix_nano
    cumulative = AggregationTemporality.CUMULATIVE

    def histogram(name: str, unit: str, description: str, series: list[Series]) -> Metric:
        points = [HistogramDataPoint(attributes=entry.attributes, start_time_unix_nano=start, time_unix_nano=now,
                                     count=entry.count, sum=entry.sum, bucket_counts=list(entry.buckets),
                                     explicit_bounds=list(BOUNDS), min=entry.min, max=entry.max)
                  for entry in series]
        return Metric(name=name, description=description, unit=unit, data=Histogram(points, cumulative))

    def total(name: str, description: str, points: list[tuple[dict, int]]) -> Metric:
        data = [NumberDataPoint(attributes=attributes, start_time_unix_nano=start, time_unix_nano=now, value=value)
                for attributes, value in points]
        return Metric(name=name, description=description, unit="1", data=Sum(data, cumulative, is_monotonic=False))

    metrics = [
        histogram("doctor.tool_result.chars", "{char}", "Injected chars of each tool result", agg.chars),
        histogram("doctor.tool_result.tokens", "{token}", "Estimated tokens (chars / 4) of each tool result",
                  agg.tokens),
        total("doctor.sessions", "Sessions in the triage database", agg.sessions),
        total("doctor.files.skipped", "Files the scans could not read", [({}, agg.files_skipped)]),
    ]
    resource = Resource.create({"service.name": "doctor-scan", "service.instance.id": agg.instance_id})
    scope = InstrumentationScope("doctor.triage", __version__)
    return MetricsData([ResourceMetrics(resource, [ScopeMetrics(scope, metrics, "")], "")])


class ExportError(Exception):
    """The collector refused the metrics or could not be reached."""


class _FirstProblem(logging.Handler):
    """Keeps the exporter's first complaint, so the user gets one line instead of its retry log."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        if not self.message:  # the first says why (refused, 4xx…); later ones only that retries ran out
            self.message = record.getMessage().splitlines()[0][:300]


def export_otlp(agg: Aggregate, url: str, timeout: float = 10.0) -> None:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics.export import MetricExportResult

    endpoint = otlp_endpoint(url)
    log = logging.getLogger("opentelemetry.exporter.otlp")
    problem = _FirstProblem()
    log.addHandler(problem)
    propagate, log.propagate = log.propagate, False
    exporter = OTLPMetricExporter(endpoint=endpoint, timeout=timeout)
    try:
        result = exporter.export(metrics_data(agg), timeout_millis=timeout * 1000)
    finally:
        exporter.shutdown()
        log.removeHandler(problem)
        log.propagate = propagate
    if result != MetricExportResult.SUCCESS:
        raise ExportError(f"{endpoint}: the OTLP export failed" + (f" ({problem.message})" if problem.message else ""))
