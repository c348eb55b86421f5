"""The audit on copies of real recordings: each kind of damage is caught, and nothing is touched."""

import hashlib
import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from doctor.core.analysis import analyze_tool_result_retention
from doctor.sources.registry import open_session
from doctor.spill import audit as audit_module
from doctor.spill.audit import audit_spill
from doctor.spill.digest import DigestCache, measure_file, utf16_units_of
from doctor.spill.pointers import pointers_for
from doctor.spill.resolve import SpillLocator
from tests.spill.recording_copies import qwen_copy

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
# File names change when the scenario is re-recorded: find them.
GATE_FILE = next((RECORDINGS / "qwen/persist-gate").glob("tmp/tool-results/call_*.txt")).relative_to(
    RECORDINGS / "qwen/persist-gate")
GREP_FILE = next((RECORDINGS / "qwen/persist-gate").glob("tmp/grep_search_*.output")).relative_to(
    RECORDINGS / "qwen/persist-gate")


def run_audit(directory: Path, **options):
    session = open_session(directory / "session.jsonl")
    pointers = pointers_for(session, analyze_tool_result_retention(session.history()))
    locator = SpillLocator(session.path, session_roots=session.spill_roots)
    return audit_spill(session, pointers, locator, **options)


def kinds(report):
    return sorted(finding.kind for finding in report.findings)


@pytest.fixture
def gate(tmp_path):
    return qwen_copy("persist-gate", tmp_path)


def test_clean_copy_passes_and_measures_the_file(gate):
    report = run_audit(gate)
    assert report.ok and report.findings == ()
    check = report.checks[0]
    assert check.resolution.remapped and check.measure.sha256 == check.pointer.sha256
    assert check.measure.size == (gate / GATE_FILE).stat().st_size
    assert report.to_json()["totals"] == {"pointers": 2, "resolved": 2, "remapped": 2,
                                          "bytes": report.total_bytes, "orphans": 0}


def test_tampered_file_is_a_digest_mismatch(gate):
    with open(gate / GATE_FILE, "ab") as handle:
        handle.write(b"x")
    report = run_audit(gate)
    assert kinds(report) == ["digest-mismatch"] and not report.ok


def test_changed_head_is_a_preview_mismatch(gate):
    path = gate / GREP_FILE
    data = path.read_bytes()
    path.write_bytes(b"X" + data[1:])
    assert kinds(run_audit(gate)) == ["preview-mismatch"]


def test_world_readable_file_is_a_privacy_finding(gate):
    (gate / GATE_FILE).chmod(0o644)
    report = run_audit(gate)
    assert kinds(report) == ["permissions"] and report.findings[0].severity == "warning"


def test_symlink_escaping_the_root_is_reported_and_never_opened(gate, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    target = gate / GATE_FILE
    target.unlink()
    target.symlink_to(secret)
    opened = []
    report = run_audit(gate, progress=lambda path, done, total: opened.append(path))
    assert kinds(report) == ["outside-root"]
    assert str(secret) not in opened and report.checks[0].measure is None
    allowed = run_audit(gate, allow_outside=True)
    assert allowed.checks[0].measure is not None  # opened only when asked


def test_missing_file_is_explained(gate):
    (gate / GREP_FILE).unlink()
    recorded = datetime.fromisoformat(open_session(gate / "session.jsonl").started.replace("Z", "+00:00"))
    [old] = run_audit(gate, now=recorded + timedelta(days=3)).findings
    assert old.kind == "missing" and "cleaned up" in old.message and old.severity == "error"
    [fresh] = run_audit(gate, now=recorded + timedelta(hours=1)).findings
    assert "copied without its spill files" in fresh.message


def test_orphan_is_noted_without_failing(gate):
    (gate / "tmp/tool-results/call_nobody.txt").write_text("stray")
    report = run_audit(gate)
    assert kinds(report) == ["orphan"] and report.ok
    assert report.orphans[0].endswith("call_nobody.txt")


def test_file_over_the_cap_sparse(gate):
    os.truncate(gate / GATE_FILE, 51 * 1024 * 1024)  # sparse: no disk used
    assert "over-file-cap" in kinds(run_audit(gate))


def test_session_budget(gate, monkeypatch):
    monkeypatch.setattr(audit_module, "QWEN_SESSION_BUDGET_BYTES", 1000)
    assert kinds(run_audit(gate)) == ["over-session-budget"]


def test_audit_never_modifies_anything(gate):
    def state():
        return {p: (p.stat().st_mtime_ns, p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
                for p in sorted(gate.rglob("*")) if p.is_file()}

    (gate / GATE_FILE).chmod(0o644)
    before = state()
    run_audit(gate)
    assert state() == before


def test_digest_cache_is_keyed_by_size_and_mtime(gate, tmp_path):
    cache = DigestCache(tmp_path / "cache" / "digests.json")
    run_audit(gate, cache=cache)
    again = DigestCache(tmp_path / "cache" / "digests.json")
    calls = []
    run_audit(gate, cache=again, progress=lambda *a: calls.append(a))
    assert calls == []  # everything came from the cache file
    with open(gate / GATE_FILE, "ab") as handle:
        handle.write(b"\n")
    assert kinds(run_audit(gate, cache=again)) == ["digest-mismatch"]


def test_utf16_units_match_javascript_lengths(tmp_path):
    text = "a\u00e9\u4e2d\U0001F600\n"
    path = tmp_path / "u.txt"
    path.write_text(text * 3, encoding="utf-8")
    measure = measure_file(path)
    assert utf16_units_of(text.encode()) == 6 and measure.utf16_units == 18 and measure.lines == 3


def test_a_fifo_is_never_read(gate):
    target = gate / GREP_FILE
    target.unlink()
    os.mkfifo(target)
    assert kinds(run_audit(gate)) == ["not-regular-file"]
