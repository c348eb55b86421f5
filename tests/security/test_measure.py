"""Hostile sessions against the figures model: a record cannot set its own turn.

Readers mark where a typed prompt starts with a key of their own (`doctor.core.turns.TURN`) on the
Contents they build. A Qwen record's message or a Codex item is copied into the history, so a
file that carries that key itself must not decide a result's turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from doctor.core.turns import TURN

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"


def turns(path: Path) -> set[int]:
    run = subprocess.run([sys.executable, "-m", "doctor", "memory", str(path), "--json", "--results"],
                         capture_output=True, text=True, timeout=120, env={"HOME": "/nonexistent", "PATH": "/usr/bin:/bin"})
    assert run.returncode in (0, 3), run.stderr
    return {result["turn"] for result in json.loads(run.stdout)["retention"]["results"]}


def test_a_qwen_record_cannot_name_its_turn(tmp_path):
    """Messages and a compression's compressedHistory (copied into the history as they stand)."""
    lines = (RECORDINGS / "qwen" / "compress-fast" / "session.jsonl").read_text().splitlines()
    planted = []
    for line in lines:
        record = json.loads(line)
        if isinstance(record.get("message"), dict):
            record["message"][TURN] = 99
        for content in (record.get("systemPayload") or {}).get("compressedHistory") or ():
            content[TURN] = 99
        planted.append(json.dumps(record))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(planted) + "\n")
    assert turns(path) == {1, 2}


def test_a_codex_item_cannot_name_its_turn(tmp_path):
    rollout = next((RECORDINGS / "codex" / "parallel-and-errors" / "home").rglob("rollout-*.jsonl"))
    planted = []
    for line in rollout.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "response_item":
            record["payload"][TURN] = 99
        planted.append(json.dumps(record))
    path = tmp_path / rollout.name
    path.write_text("\n".join(planted) + "\n")
    assert turns(path) == {1}


# The context-window note `doctor statusline` leaves for the summary (doctor/statusline/window.py): a file
# in doctor's cache folder that a planted copy must not feed a made-up window into /doctor:memory's answer.
CLAUDE = next((RECORDINGS / "claude" / "big-outputs" / "home").rglob("298108a5-*.jsonl"))


def _summary(cache: Path) -> str:
    env = {"HOME": str(cache.parent / "home"), "XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "doctor", "slash", "claude", "--transcript", str(CLAUDE)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    return run.stdout


def _note(cache: Path) -> Path:
    import os

    from doctor.statusline import cache as index, window

    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        return cache / "doctor" / index.FOLDER / window._note("claude", CLAUDE)
    finally:
        del os.environ["XDG_CACHE_HOME"]


def test_a_planted_window_note_is_not_believed(tmp_path, other_user):
    import os

    cache = tmp_path / "cache"
    note = _note(cache)
    note.parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"tokens": 1000}')
    for plant in ("symlink", "other user", "world-writable", "huge", "not json", "fifo"):
        note.unlink(missing_ok=True)
        if plant == "symlink":
            note.symlink_to(elsewhere)
        elif plant == "fifo":
            os.mkfifo(note)
        else:
            note.write_text({"huge": '{"tokens": 1000, "pad": "' + "x" * 5000 + '"}',
                             "not json": "tokens=1000"}.get(plant, '{"tokens": 1000}'))
            if plant == "other user":
                other_user.own(note)
            elif plant == "world-writable":
                note.chmod(0o666)
        assert "context window" not in _summary(cache), plant
    note.unlink()
    note.write_text('{"tokens": 1000}')
    note.chmod(0o600)
    assert "of the model's 1,000-token context window" in _summary(cache)  # the control: a note of our own


def test_a_gemini_file_cut_after_it_was_read_makes_the_figures_unavailable(tmp_path):
    """Gemini's JSON length of a long output is read from the file when the measure asks for it: a file cut
    meanwhile gives "retention unavailable" with the reason, never a traceback or a wrong figure."""
    import os
    import shutil

    from doctor.assemble import ReportOptions, session_analysis
    from doctor.core.jsvalues import MeasuredText
    from doctor.sources.registry import open_session

    source = next((RECORDINGS / "gemini" / "raised-limit" / "home").rglob("session-*.jsonl"))
    path = tmp_path / source.name
    shutil.copy(source, path)
    session = open_session(path)
    history = list(session.history_to_measure())
    measured = [part["functionResponse"]["response"]["output"] for content in history for part in content["parts"]
                if "functionResponse" in part and type(part["functionResponse"]["response"].get("output")) is MeasuredText]
    assert measured and all(text.json_token is not None for text in measured)
    os.truncate(path, 1000)
    session.measured_history = lambda: iter(history)
    _, analysis, unavailable = session_analysis(session, ReportOptions(env={}))
    assert analysis is None and "changed since it was read" in unavailable
