"""Metrics out of the triage database: a real OTLP/HTTP receiver on a local port decodes them with the
official `opentelemetry-proto` package, and `promtool check metrics` accepts the Prometheus text file.
Expected counts and sums come from `doctor memory --json --results` of the same sessions."""

from __future__ import annotations

import gzip
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
from triage_support import run_cli

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
def test_prometheus_text_passes_promtool(capsys, tmp_path: Path, corpus) -> None:
    db, reports = corpus
    target = tmp_path / "doctor.prom"
    assert run_cli(capsys, "scan", "--db", db, "--openmetrics", target, "--max-tools", "1000")[0] == 0
    assert PROMTOOL, "promtool is required (DOCTOR_REQUIRE_REFERENCE=1; CI installs Debian's prometheus)"
    text = target.read_text()
    done = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), done.stdout + done.stderr
    counts = [line for line in text.splitlines() if line.startswith("doctor_tool_result_chars_count{")]
    assert sum(int(line.rsplit(" ", 1)[1]) for line in counts) == sum(v[0] for v in _expected(reports).values())
    assert oct(target.stat().st_mode & 0o777) == "0o644"
