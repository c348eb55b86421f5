"""`doctor memory` exit codes through the real entry point (`doctor.cli.main`, and `python -m doctor` once).

0 report rendered, nothing flagged; 1 `--check` failed (regression alarm or audit
problem, as `--fail-on` chooses); 2 usage error or unreadable input, one line
naming the file, nothing written; 3 report rendered but part of the input skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from report_support import RECORDINGS, ROOT, run_cli

from doctor import exitcodes

OVERSIZED = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"
CLEAN = RECORDINGS / "qwen" / "persist-gate" / "session.jsonl"


def _spilled_copy(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A copy of a recording whose spill files live beside it (tmp/), so they can be damaged.

    The paths the session names are moved to a place that exists nowhere, so the copy
    beside it is the only file the pointers can resolve to on any machine.
    """
    target = tmp_path / "persist-gate"
    shutil.copytree(CLEAN.parent, target)
    session = target / "session.jsonl"
    session.write_text(session.read_text().replace("/tmp/qrec/persist-gate/home/", "/nonexistent-doctor-recording/"))
    files = sorted(p for p in (target / "tmp").rglob("*") if p.is_file())
    for path in files:
        path.chmod(0o600)
    return target / "session.jsonl", files


def test_clean_session_passes_the_check(capsys) -> None:
    code, out, err = run_cli(capsys, "memory", CLEAN, "--check", "--json")
    assert code == exitcodes.OK, err
    assert out.startswith("{")


def test_oversized_results_fail_the_check(capsys) -> None:
    code, out, err = run_cli(capsys, "memory", OVERSIZED, "--check")
    assert code == exitcodes.FINDINGS
    assert "Oversized results (above tool budget): 2" in out  # the report still prints
    assert err.strip() == "doctor memory: check failed: oversized"


def test_without_check_the_alarm_does_not_change_the_exit_code(capsys) -> None:
    assert run_cli(capsys, "memory", OVERSIZED, "--no-tui")[0] == exitcodes.OK


def test_fail_on_chooses_what_fails(capsys) -> None:
    assert run_cli(capsys, "memory", OVERSIZED, "--check", "--fail-on", "integrity,privacy")[0] == exitcodes.OK
    assert run_cli(capsys, "memory", OVERSIZED, "--check", "--fail-on", "any")[0] == exitcodes.FINDINGS


@pytest.mark.parametrize("damage, fail_on, category", [
    ("chmod", None, "privacy"),
    ("rewrite", None, "integrity"),
    ("delete", "missing", "missing"),
])
def test_audit_problems_fail_the_check(capsys, tmp_path: Path, damage: str, fail_on, category: str) -> None:
    session, files = _spilled_copy(tmp_path)
    victim = next(p for p in files if p.name.startswith("call_"))  # the persisted output with a sha256
    if damage == "chmod":
        victim.chmod(0o644)
    elif damage == "rewrite":
        victim.write_text("tampered\n")
        victim.chmod(0o600)
    else:
        victim.unlink()
    args = ["memory", session, "--check"] + (["--fail-on", fail_on] if fail_on else [])
    code, out, err = run_cli(capsys, *args)
    assert code == exitcodes.FINDINGS, out
    assert err.strip() == f"doctor memory: check failed: {category}"
    if damage == "delete":
        assert run_cli(capsys, "memory", session, "--check")[0] == exitcodes.OK  # missing is not a default


def test_unknown_argument_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(capsys, "memory", CLEAN, "--no-such-flag")
    assert exit_info.value.code == exitcodes.USAGE_OR_INPUT
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--fail-on", "bogus"], ["--format", "pdf"], ["--top", "0"]])
def test_bad_option_values_are_usage_errors(capsys, args) -> None:
    try:
        code = run_cli(capsys, "memory", CLEAN, "--check", *args)[0]
    except SystemExit as exc:
        code = exc.code
    assert code == exitcodes.USAGE_OR_INPUT


def test_missing_file_is_one_line_naming_it_and_writes_nothing(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    report = tmp_path / "report.html"
    code, out, err = run_cli(capsys, "memory", missing, "--format", "html", "-o", report)
    assert code == exitcodes.USAGE_OR_INPUT
    assert out == "" and not report.exists()
    assert len(err.strip().splitlines()) == 1 and str(missing) in err


def test_unknown_format_is_an_input_error(capsys, tmp_path: Path) -> None:
    odd = tmp_path / "notes.txt"
    odd.write_text("just some notes\nnot a session\n")
    code, out, err = run_cli(capsys, "memory", odd, "--json")
    assert code == exitcodes.USAGE_OR_INPUT
    assert out == "" and len(err.strip().splitlines()) == 1 and str(odd) in err


def test_unwritable_output_is_an_input_error(capsys, tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "memory", CLEAN, "--json", "-o", tmp_path / "no" / "such" / "dir.json")
    assert code == exitcodes.USAGE_OR_INPUT and "dir.json" in err


def _partial(tmp_path: Path, source: Path) -> Path:
    target = tmp_path / "partial" / "session.jsonl"
    target.parent.mkdir(parents=True)
    lines = source.read_bytes().splitlines(keepends=True)
    lines[3:3] = [b"this is not json\n"]
    target.write_bytes(b"".join(lines))
    return target


def test_partial_input_exits_3_and_says_so(capsys, tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "memory", _partial(tmp_path, CLEAN), "--no-tui")
    assert code == exitcodes.PARTIAL_INPUT, err
    assert "\nInput problems\n  warning: " in out and ":4: " in out
    assert "could not be read and was skipped" in out


def test_a_failed_check_outranks_partial_input(capsys, tmp_path: Path) -> None:
    assert run_cli(capsys, "memory", _partial(tmp_path, OVERSIZED), "--check")[0] == exitcodes.FINDINGS


def test_python_dash_m_doctor(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    failed = subprocess.run([sys.executable, "-m", "doctor", "memory", str(OVERSIZED), "--check", "--json"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert failed.returncode == exitcodes.FINDINGS, failed.stderr
    assert '"oversizedResultCount": 2' in failed.stdout
    usage = subprocess.run([sys.executable, "-m", "doctor", "memory", "--bogus"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert usage.returncode == exitcodes.USAGE_OR_INPUT and usage.stdout == ""
