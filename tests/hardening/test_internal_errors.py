"""A bug inside doctor ends in one line naming the input and exit 4; `--debug` shows the traceback."""

import subprocess
import sys
from pathlib import Path

import pytest

from doctor import cli, exitcodes

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "tests" / "recordings" / "qwen" / "multi-turn" / "session.jsonl"


@pytest.fixture
def broken_reader(monkeypatch):
    def explode(path, agent=None):
        raise KeyError("the bug")
    monkeypatch.setattr("doctor.commands.memory.open_session", explode)


def test_an_internal_error_is_one_line_with_its_own_exit_code(broken_reader, capsys):
    code = cli.main(["memory", str(SESSION), "--json"])
    out, err = capsys.readouterr()
    assert code == exitcodes.INTERNAL_ERROR == 4
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"doctor memory: internal error on {SESSION}: KeyError: 'the bug'")
    assert err.rstrip().endswith("run again with --debug for the traceback")


@pytest.mark.parametrize("argv", [
    ["--debug", "memory", str(SESSION), "--json"],
    ["memory", str(SESSION), "--json", "--debug"],
])
def test_debug_anywhere_prints_the_traceback(broken_reader, capsys, argv):
    assert cli.main(argv) == exitcodes.INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "KeyError: 'the bug'" in err
    assert "run again with --debug" not in err


def test_ctrl_c_is_quiet(monkeypatch, capsys):
    def interrupted(path, agent=None):
        raise KeyboardInterrupt
    monkeypatch.setattr("doctor.commands.memory.open_session", interrupted)
    assert cli.main(["memory", str(SESSION), "--json"]) == exitcodes.INTERRUPTED
    assert capsys.readouterr().err == ""


def test_a_closed_pipe_is_not_an_error():
    """`doctor memory … | head -1`: the installed console script, as a user runs it."""
    doctor = Path(sys.executable).with_name("doctor")
    result = subprocess.run(f"'{doctor}' memory '{SESSION}' --format text | head -1", shell=True,
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.strip()
    assert "Traceback" not in result.stderr and "Error" not in result.stderr
