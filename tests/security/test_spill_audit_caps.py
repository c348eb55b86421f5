"""The spill audit reads at most 1 GiB of one file and 4 GiB in all: a stranger's folder can hold a sparse
file of any size (0 bytes on disk), which the audit used to hash whole (a 20 GiB one: over 120 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from doctor.spill import audit as audit_module
from tests.spill.recording_copies import qwen_copy
from tests.spill.test_audit import GATE_FILE, GREP_FILE, kinds, run_audit

ROOT = Path(__file__).resolve().parents[2]


def test_a_sparse_spill_file_over_the_cap_is_sized_not_hashed(tmp_path: Path) -> None:
    gate = qwen_copy("persist-gate", tmp_path)
    os.truncate(gate / GATE_FILE, 20 << 30)  # sparse: no disk used
    done = subprocess.run([sys.executable, "-m", "doctor.cli", "spill", "verify", str(gate / "session.jsonl"), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    (finding,) = [f for f in report["findings"] if f["kind"] == "not-measured"]
    assert finding["severity"] == "warning" and "over the 1024.0 MiB doctor reads of one spill file" in finding["message"]
    assert report["totals"]["bytes"] >= 20 << 30  # sized all the same


def test_the_audit_stops_hashing_once_it_has_read_its_cap(tmp_path: Path, monkeypatch) -> None:
    gate = qwen_copy("persist-gate", tmp_path)
    first, second = (gate / GATE_FILE).stat().st_size, (gate / GREP_FILE).stat().st_size
    monkeypatch.setattr(audit_module, "MEASURE_AUDIT_CAP", max(first, second) + min(first, second) - 1)
    report = run_audit(gate)
    assert kinds(report).count("not-measured") == 1
    assert sum(check.measure is not None for check in report.checks) == 1
