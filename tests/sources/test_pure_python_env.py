"""DOCTOR_PURE_PYTHON=1, as a machine without a compiler runs doctor: the same report, no C module.

The fast readers of Claude Code and Codex sessions lean on the optional C accelerator
(doctor/core/_rawjson.c); without it every line takes the exact path. The differential tests
swap the accelerator out inside one process; this runs `doctor memory --json` as a user would,
in a fresh process with the environment variable set and without it, on real recordings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.core import rawjson

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
SESSIONS = [
    next((RECORDINGS / "claude/big-outputs/home/.claude/projects").glob("*/*.jsonl")),
    next((RECORDINGS / "codex/big-outputs/home/.codex/sessions").glob("*/*/*/rollout-*.jsonl")),
]


def _run(args: list[str], home: Path, pure: bool) -> str:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if pure:
        env["DOCTOR_PURE_PYTHON"] = "1"
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode in (0, 3), result.stderr
    return result.stdout


@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.parts[len(RECORDINGS.parts)])
def test_the_pure_python_reader_reports_the_same(session: Path) -> None:
    home = next(parent for parent in session.parents if parent.name == "home")
    probe = ["-c", "from doctor.core import rawjson; print(rawjson.accelerated, rawjson.scan_records is None)"]
    assert _run(probe, home, pure=True).split() == ["False", "True"]
    if not rawjson.accelerated:
        pytest.skip("the C accelerator is not built here: both runs would be pure")
    assert _run(probe, home, pure=False).split() == ["True", "False"]
    report = ["-m", "doctor", "memory", str(session), "--json"]
    pure = _run(report, home, pure=True)
    assert '"toolResultCount"' in pure
    assert _run(report, home, pure=False) == pure
