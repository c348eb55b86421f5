"""`doctor sessions` through the CLI entry point and as `python -m doctor`, on real Gemini recordings."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor import exitcodes
from doctor.cli import main

RECORDINGS = Path(__file__).resolve().parent / "recordings" / "gemini"
REPO = Path(__file__).resolve().parents[1]
QWEN_WRAPPER_CHARS = 64  # Qwen's totalChars adds 64 per functionResponse to the output length


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A HOME holding both Gemini recordings; big-outputs is the newer one."""
    home = tmp_path / "home"
    for age, scenario in enumerate(["big-outputs", "parallel-and-errors"]):
        shutil.copytree(RECORDINGS / scenario / "home/.gemini/tmp/w", home / f".gemini/tmp/{scenario}")
        for path in (home / f".gemini/tmp/{scenario}/chats").iterdir():
            os.utime(path, (1_800_000_000 - age, 1_800_000_000 - age))
    (home / ".gemini/projects.json").write_text(json.dumps({"projects": {
        "/work/big": "big-outputs", "/work/\x1b[31mred": "parallel-and-errors"}}))
    for name in ("HOME", "QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


def _expected(scenario: str) -> tuple[int, int]:
    total = json.loads((RECORDINGS / scenario / "expected.json").read_text())["total"]
    return total["toolResults"], total["totalChars"] + QWEN_WRAPPER_CHARS * total["toolResults"]


def test_json_rows_carry_retention_figures(home, capsys):
    assert main(["sessions", "--json"]) == exitcodes.OK
    rows = json.loads(capsys.readouterr().out)
    assert [(r["agent"], r["project"]) for r in rows] == [("gemini", "/work/big"), ("gemini", "/work/\x1b[31mred")]
    assert [(r["tool_results"], r["retained_chars"]) for r in rows] == [_expected("big-outputs"),
                                                                       _expected("parallel-and-errors")]


def test_table_is_plain_and_inert(home, capsys):
    assert main(["sessions", "--limit", "1"]) == exitcodes.OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["agent", "project", "id", "started", "size", "tool", "results", "retained", "chars"]
    assert len(lines) == 2 and f"{_expected('big-outputs')[1]:,}" in lines[1]
    main(["sessions", "--project", "/work/\x1b[31mred"])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "/work/?[31mred" in out


def test_fast_skips_reading(home, capsys):
    assert main(["sessions", "--fast", "--json"]) == exitcodes.OK
    assert {r["tool_results"] for r in json.loads(capsys.readouterr().out)} == {None}


def test_unreadable_session_is_reported_and_exit_code_says_partial(home, capsys):
    broken = next((home / ".gemini/tmp/big-outputs/chats").iterdir()).with_name("session-2026-12-03T10-00-deadbeef.json")
    broken.write_text('{\n "sessionId": "x",\n "projectHash": "y",\n "messages": [')
    assert main(["sessions"]) == exitcodes.PARTIAL_INPUT
    captured = capsys.readouterr()
    assert "deadbeef" in captured.out and "error" in captured.out
    assert "session-2026-12-03T10-00-deadbeef.json" in captured.err


def test_no_sessions(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert main(["sessions"]) == exitcodes.OK
    assert capsys.readouterr().out.strip() == "No sessions found."


def test_python_dash_m(home):
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "doctor", "sessions", "--agent", "gemini", "--json"],
                          capture_output=True, text=True, env=env, cwd=home, check=False)
    assert done.returncode == exitcodes.OK, done.stderr
    rows = json.loads(done.stdout)
    assert (rows[0]["tool_results"], rows[0]["retained_chars"]) == _expected("big-outputs")


def test_bad_agent_is_a_usage_error(home):
    with pytest.raises(SystemExit) as exit_info:
        main(["sessions", "--agent", "nobody"])
    assert exit_info.value.code == exitcodes.USAGE_OR_INPUT


def test_started_is_the_sessions_first_timestamp_in_utc_for_every_agent(tmp_path, monkeypatch, capsys):
    """Not the file's mtime (a checkout's time): the first record's time, as `…Z`, whatever the agent."""
    from tests.sources.test_discovery import four_agent_home

    home = four_agent_home(tmp_path)
    for name in ("QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TZ", "America/New_York")  # the listing must not depend on the reader's zone
    assert main(["sessions", "--fast", "--json"]) == exitcodes.OK
    started = {row["agent"]: row["started"] for row in json.loads(capsys.readouterr().out)}
    # the first "timestamp" (Gemini: "startTime") each real client wrote, to the second
    assert started == {"qwen": "2026-12-02T11:51:32Z", "claude": "2026-12-02T11:34:30Z",
                       "codex": "2026-12-02T11:38:37Z", "gemini": "2026-12-02T11:37:32Z"}
