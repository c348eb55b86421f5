"""`doctor whatif` reads spill files a session names: the session is hostile, so is every path in it.

A real recording (tests/recordings/qwen-whatif/default) is edited the way an attacker would: its
truncation header names a file outside the session's spill folders, its spill file is replaced by a
symlink to a secret or by a FIFO, the path carries terminal escapes. The replay must never read the
secret, never block, and print nothing that drives the terminal: the result is unknown, with the reason.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.whatif.recordings import doctor, unpack

SHELL_60K = "call_w02_shell_60k"  # cut by the shell: its header names tmp/run_shell_command_<hex>.output
SECRET = "TOP-SECRET-LINE"


@pytest.fixture
def recording(tmp_path):
    session = unpack("default", tmp_path)
    text = session.read_text()
    line = next(raw for raw in text.splitlines() if f'"{SHELL_60K}"' in raw and '"tool_result"' in raw)
    written = json.loads(line)["message"]["parts"][0]["functionResponse"]["response"]["output"]
    path = written.split("The full output has been saved to: ", 1)[1].split("\n", 1)[0]
    spill = session.parent / "tmp" / path.rsplit("/", 1)[1]
    assert spill.is_file()
    return session, path, spill


def _change(session, home):
    result = doctor("whatif", session, "--json", "--set", "tools.truncateToolOutputThreshold=100000", home=home)
    assert result.returncode in (0, 3), result.stderr
    assert SECRET not in result.stdout
    return {c["callId"]: c for c in json.loads(result.stdout)["changes"]}[SHELL_60K], result


def test_a_path_outside_the_spill_folders_is_not_read(recording, tmp_path):
    session, path, spill = recording
    secret = tmp_path / "elsewhere" / "secret.output"
    secret.parent.mkdir()
    secret.write_text(SECRET * 1000)
    spill.unlink()
    session.write_text(session.read_text().replace(path, str(secret)))
    change, _ = _change(session, tmp_path)
    assert not change["known"] and "outside the session's spill folders" in change["why"]


def test_a_symlink_planted_for_the_spill_file_is_not_followed(recording, tmp_path):
    session, _, spill = recording
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET * 1000)
    spill.unlink()
    spill.symlink_to(secret)
    change, _ = _change(session, tmp_path)
    assert not change["known"] and "outside" in change["why"]


def test_a_fifo_for_the_spill_file_does_not_block(recording, tmp_path):
    session, _, spill = recording
    spill.unlink()
    os.mkfifo(spill)
    change, _ = _change(session, tmp_path)  # doctor() times out after 300 s; a blocked open would hang
    assert not change["known"] and "not a regular file" in change["why"]


def test_escapes_in_a_recorded_path_reach_no_terminal(recording, tmp_path):
    session, path, spill = recording
    hostile = path.replace("run_shell_command_", "run_\\u001b]0;pwned\\u0007shell_")
    spill.unlink()
    session.write_text(session.read_text().replace(path, hostile))
    result = doctor("whatif", session, "--set", "tools.truncateToolOutputThreshold=100000", home=tmp_path)
    assert result.returncode in (0, 3), result.stderr
    assert "run_shell_" in result.stdout and "pwned" not in result.stdout  # the reason names the path, sequence dropped
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
