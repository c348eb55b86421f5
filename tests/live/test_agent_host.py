"""The example agent host: `/doctor memory` through the host's own command dispatch and REPL."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

HOST_DIR = Path(__file__).resolve().parents[2] / "examples" / "agent_host"


@pytest.fixture(scope="module")
def host_module():
    sys.path.insert(0, str(HOST_DIR))
    try:
        import host

        yield host
    finally:
        sys.path.remove(str(HOST_DIR))


@pytest.fixture
def host(host_module, tmp_path):
    from model import ScriptedModel
    from tools import ToolBox

    out = io.StringIO()
    toolbox = ToolBox(workdir=tmp_path, spill_dir=tmp_path / ".spill")
    return host_module.Host(ScriptedModel.from_file(HOST_DIR / "script.json"), toolbox, out=out)


def _json_after(out: io.StringIO, mark: int) -> dict:
    return json.loads(out.getvalue()[mark:])


def test_doctor_memory_through_the_hosts_dispatch(host, tmp_path):
    host.dispatch("/doctor memory --json")
    empty = _json_after(host.out, 0)
    assert empty["toolResultRetention"]["toolResultCount"] == 0

    host.dispatch("list the numbers and look at the table")
    mark = len(host.out.getvalue())
    host.dispatch("/doctor memory --json")
    report = _json_after(host.out, mark)
    stats = report["toolResultRetention"]
    assert stats["toolResultCount"] == 4 and stats["oversizedResultCount"] == 0
    layers = report["retention"]["layers"]
    assert layers["in-tool truncation"] == 1 and layers["persistence gate"] == 1
    assert report["process"]["pid"] == os.getpid()
    assert report["process"]["history"]["entries"] == len(host.history)

    spilled = sorted((tmp_path / ".spill").rglob("*.*"))
    assert {p.suffix for p in spilled} == {".output", ".txt"}
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in spilled)


def test_the_spill_files_pass_doctors_audit(host, tmp_path):
    """The stub's sha256 and the .output pointer resolve: doctor's own spill audit finds them intact."""
    from doctor.sources.base import LoadedSession
    from doctor.spill.audit import audit_spill
    from doctor.spill.pointers import pointers_for
    from doctor.spill.resolve import SpillLocator

    host.dispatch("go")
    report = host.doctor.report()
    session = LoadedSession(agent="python-host", path=None, history=lambda: iter(host.history))
    pointers = pointers_for(session, report.retention)
    audit = audit_spill(session, pointers, SpillLocator(None, session_roots=[tmp_path / ".spill"])).to_json()
    assert audit["ok"] and audit["findings"] == [] and audit["totals"]["resolved"] == len(pointers) == 2
    assert {check["file"]["mode"] for check in audit["pointers"]} == {"0600"}
    persisted = next(check for check in audit["pointers"] if check["kind"] == "qwen-persisted")
    assert persisted["sha256"] == persisted["file"]["sha256"]


def test_unknown_arguments_and_commands(host):
    host.dispatch("/doctor memory --verbose")
    host.dispatch("/nope")
    lines = host.out.getvalue().splitlines()
    assert lines[0] == "[error] Unknown argument(s): --verbose. Usage: /doctor memory [--json] [--sample] [--snapshot]"
    assert lines[1].startswith("[error] Unknown command /nope")


def test_repl_on_stdin(tmp_path):
    """The host as a user runs it: lines on stdin, answers on stdout."""
    lines = "go\n/doctor memory\n/doctor memory --oops\n/quit\nnever read\n"
    done = subprocess.run(
        [sys.executable, str(HOST_DIR / "host.py"), "--workdir", str(tmp_path)],
        input=lines, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Tool result retention\n  Tool results in history: 4\n" in out
    assert "Memory Diagnostics" in out
    assert "[error] Unknown argument(s): --oops." in out
    assert "never read" not in out
