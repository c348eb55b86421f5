"""Metrics out of the triage database: a real OTLP/HTTP receiver on a local port decodes them with the
official `opentelemetry-proto` package; `promtool check metrics` and prometheus_client's OpenMetrics parser
accept the --openmetrics file.
Expected counts and sums come from `doctor memory --json --results` of the same sessions."""

from __future__ import annotations

import bisect
import gzip
import json
import shutil
import subprocess
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from triage_support import RECORDINGS, run_cli

from doctor.triage.metrics import BOUNDS

PROMTOOL = shutil.which("promtool")
REQUIRED = __import__("os").environ.get("DOCTOR_REQUIRE_REFERENCE") == "1"


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP metrics endpoint on 127.0.0.1 that keeps every decoded request."""

    def __init__(self) -> None:
        self.requests: list[ExportMetricsServiceRequest] = []
        self.paths: list[str] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(request)
        self.server.paths.append(self.path)
        reply = ExportMetricsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def receiver():
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _expected(reports) -> dict:
    """(agent, version, tool, layer, oversized) -> [count, chars sum, tokens sum]."""
    groups = defaultdict(lambda: [0, 0.0, 0])
    for report in reports:
        source = report["source"]
        for result in report["retention"]["results"]:
            key = (source["agent"], source["agentVersion"] or "", result["tool"][:120], result["layer"],
                   result["oversized"])
            groups[key][0] += 1
            groups[key][1] += result["chars"]
            groups[key][2] += result["tokens"]
    return groups


def _attributes(point) -> dict:
    values = {}
    for item in point.attributes:
        which = item.value.WhichOneof("value")
        values[item.key] = getattr(item.value, which)
    return values


def test_otlp_export_reaches_a_real_receiver(capsys, receiver, corpus) -> None:
    db, reports = corpus
    code, _, err = run_cli(capsys, "scan", "--db", db, "--otlp", receiver.url, "--max-tools", "1000")
    assert code == 0, err
    assert receiver.paths == ["/v1/metrics"]
    [request] = receiver.requests
    metrics = {m.name: m for rm in request.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert {"doctor.tool_result.chars", "doctor.tool_result.tokens", "doctor.sessions", "doctor.files.skipped"} <= \
        set(metrics)
    expected = _expected(reports)
    got_chars, got_tokens = defaultdict(lambda: [0, 0.0]), defaultdict(lambda: [0, 0.0])
    for name, got in (("doctor.tool_result.chars", got_chars), ("doctor.tool_result.tokens", got_tokens)):
        for point in metrics[name].histogram.data_points:
            attrs = _attributes(point)
            assert set(attrs) == {"agent", "agent_version", "tool", "tool_type", "layer", "oversized"}
            assert list(point.explicit_bounds) == list(BOUNDS) and sum(point.bucket_counts) == point.count
            key = (attrs["agent"], attrs["agent_version"], attrs["tool"], attrs["layer"], attrs["oversized"])
            got[key][0] += point.count
            got[key][1] += point.sum
    assert {k: (v[0], v[1]) for k, v in got_chars.items()} == {k: (v[0], v[1]) for k, v in expected.items()}
    assert {k: (v[0], v[1]) for k, v in got_tokens.items()} == {k: (v[0], v[2]) for k, v in expected.items()}
    sessions = {(_attributes(p)["agent"], _attributes(p)["agent_version"]): p.as_int
                for p in metrics["doctor.sessions"].sum.data_points}
    assert sum(sessions.values()) >= len(reports)


def test_cardinality_is_bounded(capsys, receiver, corpus) -> None:
    db, _ = corpus
    assert run_cli(capsys, "scan", "--db", db, "--otlp", receiver.url + "/v1/metrics", "--max-tools", "3")[0] == 0
    points = [p for rm in receiver.requests[0].resource_metrics for sm in rm.scope_metrics for m in sm.metrics
              if m.name == "doctor.tool_result.chars" for p in m.histogram.data_points]
    tools = {_attributes(p)["tool"] for p in points}
    assert len(tools) == 4 and "other" in tools


def test_an_unreachable_collector_is_one_line(capsys, tmp_path: Path, corpus) -> None:
    db, _ = corpus
    with Receiver() as closed:
        url = closed.url  # bound, then closed: nothing listens there
    code, _, err = run_cli(capsys, "scan", "--db", db, "--otlp", url)
    assert code == 2 and err.count("\n") == 1 and "OTLP export failed" in err and "refused" in err.lower()


@pytest.mark.skipif(PROMTOOL is None and not REQUIRED, reason="promtool is not installed")
def test_openmetrics_passes_promtool_and_the_openmetrics_parser(capsys, tmp_path: Path, corpus) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    db, reports = corpus
    target = tmp_path / "doctor.prom"
    assert run_cli(capsys, "scan", "--db", db, "--openmetrics", target, "--max-tools", "1000")[0] == 0
    assert PROMTOOL, "promtool is required (DOCTOR_REQUIRE_REFERENCE=1; CI installs Debian's prometheus)"
    text = target.read_text()
    assert text.endswith("\n# EOF\n")
    done = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), done.stdout + done.stderr
    families = {family.name: family for family in text_string_to_metric_families(text)}  # refuses a missing # EOF
    assert families["doctor_tool_result_chars"].type == "histogram"
    counts = [s.value for s in families["doctor_tool_result_chars"].samples if s.name.endswith("_count")]
    assert sum(counts) == sum(v[0] for v in _expected(reports).values())
    assert oct(target.stat().st_mode & 0o777) == "0o644"


def test_a_malformed_collector_url_is_a_usage_error(capsys, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    for url, words in (("http://[::1", "not a URL (Invalid IPv6 URL)"), ("http://127.0.0.1:99999", "not a URL"),
                       ("127.0.0.1:4318", "expected an http:// or https:// URL")):
        code, out, err = run_cli(capsys, "scan", "--db", db, "--otlp", url, RECORDINGS / "codex")
        assert code == 2 and words in err and err.count("\n") == 1, err
    assert not db.exists()  # said before anything was scanned


def test_one_database_is_one_instance_across_runs(capsys, receiver, corpus, tmp_path: Path) -> None:
    db, _ = corpus
    other = tmp_path / "other.duckdb"
    assert run_cli(capsys, "scan", "--db", other, RECORDINGS / "codex", "-o", tmp_path / "a.txt")[0] == 0
    for database in (db, db, other):
        assert run_cli(capsys, "scan", "--db", database, "--otlp", receiver.url)[0] == 0

    def identity(request) -> tuple:
        [resource] = [rm.resource for rm in request.resource_metrics]
        attrs = {a.key: a.value.string_value for a in resource.attributes}
        [start] = {p.start_time_unix_nano for rm in request.resource_metrics for sm in rm.scope_metrics
                   for m in sm.metrics if m.name == "doctor.tool_result.chars" for p in m.histogram.data_points}
        return attrs["service.instance.id"], start

    first, again, elsewhere = map(identity, receiver.requests)
    assert first == again and first[0] != elsewhere[0]


def test_report_bins_and_metric_buckets_share_their_edges(capsys, receiver, corpus) -> None:
    """The report's histogram of a tool holds, bin by bin, the counts of the OTLP buckets of that tool."""
    db, reports = corpus
    code, out, err = run_cli(capsys, "scan", "--db", db, "--json", "--otlp", receiver.url, "--max-tools", "1000")
    assert code == 0, err
    histograms = json.loads(out)["charts"]["histograms"]
    buckets = defaultdict(lambda: [0] * (len(BOUNDS) + 1))
    for rm in receiver.requests[0].resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == "doctor.tool_result.chars":
                    for point in metric.histogram.data_points:
                        assert list(point.explicit_bounds) == list(BOUNDS)
                        for index, count in enumerate(point.bucket_counts):
                            buckets[_attributes(point)["tool"]][index] += count
    by_size = defaultdict(lambda: [0] * (len(BOUNDS) + 1))  # independently: the first bound a size does not pass
    for report in reports:
        for result in report["retention"]["results"]:
            by_size[result["tool"]][bisect.bisect_left(BOUNDS, result["chars"])] += 1
    assert histograms
    for histogram in histograms:
        report_bins = {b["bin"]: b["results"] for b in histogram["bins"]}
        otlp = {index: count for index, count in enumerate(buckets[histogram["tool"]]) if count}
        assert {k: v for k, v in report_bins.items() if v} == otlp == \
            {index: count for index, count in enumerate(by_size[histogram["tool"]]) if count}
