"""Gemini's `/doctor:memory` describes the session of the Gemini process it runs under, or says it cannot tell.

`doctor hook gemini` (a subprocess, JSON on stdin, as Gemini CLI runs it on `SessionStart`) records the
session for its agent process: the nearest ancestor that is not a shell, here the test's own process.
`doctor slash gemini` (a subprocess of the same process, as Gemini runs `!{…}`) finds it; run under another
process it finds nothing and says so, never describing the folder's newest session instead. The
payload is hostile: an id that is not one, a transcript path outside Gemini's folder are not used.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations.clients import DOCTOR_BIN

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "gemini" / "big-outputs"


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(RECORDING / "home", home)
    (tmp_path / "w").mkdir()
    return home


def _env(home: Path) -> dict:
    return {"PATH": f"{DOCTOR_BIN}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def _session(home: Path) -> Path:
    [path] = (home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")
    return path


def _hook(home: Path, payload: dict, *, through: str | None = None) -> subprocess.CompletedProcess:
    """`doctor hook gemini` with `payload` on stdin; `through`: started by another (non-shell) process first."""
    command = [str(DOCTOR_BIN / "doctor"), "hook", "gemini"]
    if through:
        command = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)",
                   *command]
    return subprocess.run(command, input=json.dumps(payload), capture_output=True, text=True, env=_env(home),
                          cwd=home.parent / "w", timeout=60)


def _slash(home: Path) -> str:
    # through a shell, as Gemini runs a command's `!{…}`: the shell is not the agent process
    done = subprocess.run(["sh", "-c", "doctor slash gemini; exit $?"], capture_output=True, text=True,
                          env=_env(home), cwd=home.parent / "w", timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _start(session_id: str, transcript: str) -> dict:
    return {"session_id": session_id, "transcript_path": transcript, "cwd": "/w", "hook_event_name": "SessionStart",
            "timestamp": "2026-12-07T01:48:00.000Z", "source": "startup"}


def test_the_recorded_session_is_the_one_described(home):
    transcript = _session(home)
    session_id = json.loads(_first_line(transcript))["sessionId"]
    hooked = _hook(home, _start(session_id, str(transcript)))
    assert (hooked.returncode, hooked.stdout) == (0, "")  # the hook says nothing to Gemini
    assert f"doctor memory — gemini session {session_id}" in _slash(home)


def test_without_a_record_of_this_process_the_session_is_not_guessed(home):
    """The folder has a session (the recording), and another process recorded it: this one cannot tell."""
    transcript = _session(home)
    session_id = json.loads(_first_line(transcript))["sessionId"]
    assert _hook(home, _start(session_id, str(transcript)), through="python").returncode == 0
    said = _slash(home)
    assert said.startswith("doctor: cannot tell which session this is") and said.count("\n") == 1
    assert session_id not in said and "not describing another session" in said


def test_a_new_session_without_its_file_yet_is_named_not_replaced(home):
    """A new session whose file Gemini has not written: this session, no transcript yet (the recording, newer
    on disk, is not described)."""
    folder = _session(home).parent
    hooked = _hook(home, _start("0b1c2d3e-4f50-4617-8899-aabbccddeeff", str(folder / "session-new.jsonl")))
    assert hooked.returncode == 0
    assert _slash(home) == ("doctor: session 0b1c2d3e-4f50-4617-8899-aabbccddeeff has no transcript yet (its first "
                            "prompt); run /doctor:memory again after a turn.\n")


@pytest.mark.parametrize("hostile", [
    {"session_id": "../../x", "transcript_path": "SESSION"},
    {"session_id": "a\nb", "transcript_path": "SESSION"},
    {"session_id": 7, "transcript_path": "SESSION"},
])
def test_a_hostile_session_id_is_not_recorded(home, hostile):
    payload = {**_start("x", ""), **hostile, "transcript_path": str(_session(home))}
    assert _hook(home, payload).returncode == 0
    assert _slash(home).startswith("doctor: cannot tell which session this is")


def test_a_transcript_outside_geminis_folder_is_never_read(home, tmp_path):
    """A path the payload names outside Gemini's session folder (here a copy of a real session, which would
    parse) is not read: the session is known by its id, its file is not."""
    elsewhere = tmp_path / "elsewhere.jsonl"
    shutil.copy(_session(home), elsewhere)
    assert _hook(home, _start("0b1c2d3e-4f50-4617-8899-aabbccddeeff", str(elsewhere))).returncode == 0
    said = _slash(home)
    assert "has no transcript yet" in said and "doctor memory —" not in said


def test_records_of_processes_that_ended_are_removed(home):
    transcript = _session(home)
    ended = subprocess.Popen(["sleep", "0"])
    ended.wait()
    folder = home / ".cache" / "doctor" / "sessions"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(home / ".cache" / "doctor", 0o700)
    stale = folder / f"gemini-{ended.pid}-1.json"
    stale.write_text('{"sessionId": "old", "transcriptPath": null}')
    os.chmod(stale, 0o600)
    assert _hook(home, _start("0b1c2d3e-4f50-4617-8899-aabbccddeeff", str(transcript))).returncode == 0
    assert not stale.exists() and len(list(folder.iterdir())) == 1


def _first_line(path: Path) -> str:
    with path.open(encoding="utf-8") as handle:
        return handle.readline()
