"""DOCTOR_PURE_PYTHON=1, as a machine without a compiler runs doctor: the same report, no C module.

The fast readers of Claude Code and Codex sessions lean on the optional C accelerator
(doctor/core/_rawjson.c); without it every line takes the exact path. The differential tests
swap the accelerator out inside one process; this runs `doctor memory --json` as a user would,
in a fresh process with the environment variable set and without it, on real recordings,
and once from a package built where the compiler fails (what README's install does on such a machine).
"""

from __future__ import annotations

import os
import re
import shutil
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


def test_a_glued_line_reports_the_same_with_and_without_the_c_module(tmp_path: Path) -> None:
    """Two records glued on one line and one torn across two, in a real Claude recording: the
    accelerated reader once misplaced every later line of the chunk (or failed with an IndexError);
    it must report what the exact path reports."""
    if not rawjson.accelerated:
        pytest.skip("the C accelerator is not built here: both runs would be pure")
    lines = SESSIONS[0].read_bytes().split(b"\n")
    lines[0:2] = [lines[0] + lines[1]]  # glued
    at = next(i for i, line in enumerate(lines) if line.startswith(b'{"parentUuid"') and b'"type":"user"' in line)
    lines[at] = lines[at].replace(b'"message":', b'\n"message":', 1)  # torn across two lines
    session = tmp_path / SESSIONS[0].name
    session.write_bytes(b"\n".join(lines))
    report = ["-m", "doctor", "memory", str(session), "--json"]
    pure = _run(report, tmp_path, pure=True)
    assert '"toolResultCount"' in pure
    assert _run(report, tmp_path, pure=False) == pure


# One recording of each agent, and the identifying string fields its reader keeps.
LONG_FIELD_SESSIONS = SESSIONS + [
    RECORDINGS / "qwen/multi-turn/session.jsonl",
    next((RECORDINGS / "gemini/big-outputs/home/.gemini/tmp").glob("*/chats/*.jsonl")),
]
LONG_FIELDS = re.compile(rb'"(cwd|sessionId|session_id|uuid|parentUuid|timestamp|version|agentId|id|projectHash|'
                         rb'startTime|lastUpdated|originator|cli_version)":"([^"\\]{1,120})"')


@pytest.mark.parametrize("session", LONG_FIELD_SESSIONS, ids=lambda p: p.parts[len(RECORDINGS.parts)])
def test_identifying_fields_of_300_characters_report_the_same_with_and_without_the_c_module(
        session: Path, tmp_path: Path) -> None:
    """The C scans blank every long string value in the copy a fast reader decodes; a session whose ids,
    times, versions or working directory are that long (a project 300 characters deep) must report what
    the exact path reports (the Claude reader once read them as "")."""
    if not rawjson.accelerated:
        pytest.skip("the C accelerator is not built here: both runs would be pure")
    data, count = LONG_FIELDS.subn(lambda m: b'"%s":"%s/%s"' % (m[1], m[2], b"deep" * 75), session.read_bytes())
    assert count > 3
    copy = tmp_path / session.name
    copy.write_bytes(data)
    report = ["-m", "doctor", "memory", str(copy), "--json"]
    pure = _run(report, tmp_path, pure=True)
    assert "deep" * 75 in pure  # the session id, or the start time, as the exact path read it
    assert _run(report, tmp_path, pure=False) == pure


@pytest.mark.slow
@pytest.mark.ci
def test_an_install_without_a_compiler_works(tmp_path: Path) -> None:
    """setup.py's extension is optional: with no working C compiler the build still succeeds, the
    installed package has no C module, and `doctor memory` reports what the accelerated one does."""
    source = tmp_path / "source"  # the sources alone: no build/ or module left by an earlier build
    shutil.copytree(Path(__file__).resolve().parents[2] / "doctor", source / "doctor",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(Path(__file__).resolve().parents[2] / name, source / name)
    env = {**os.environ, "CC": "/bin/false", "LDSHARED": "/bin/false", "PIP_NO_INPUT": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
         "--target", str(tmp_path / "site"), str(source)],
        capture_output=True, text=True, env=env, timeout=300)
    assert build.returncode == 0, build.stderr
    installed = tmp_path / "site" / "doctor"
    assert not list(installed.glob("core/_rawjson*.so")), "a C module was built with a failing compiler?"

    session = SESSIONS[0]
    home = next(parent for parent in session.parents if parent.name == "home")
    run_env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(tmp_path / "site")}
    probe = subprocess.run(
        [sys.executable, "-c", "import doctor, doctor.core.rawjson as r; print(doctor.__file__, r.accelerated)"],
        capture_output=True, text=True, env=run_env, cwd=tmp_path, timeout=60)
    assert probe.stdout.split() == [str(installed / "__init__.py"), "False"], probe.stderr
    report = [sys.executable, "-m", "doctor", "memory", str(session), "--json"]
    pure = subprocess.run(report, capture_output=True, text=True, env=run_env, cwd=tmp_path, timeout=120)
    assert pure.returncode in (0, 3), pure.stderr
    assert pure.stdout == _run(report[1:], home, pure=False)
