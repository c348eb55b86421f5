"""`doctor slash` and `doctor hook` through the command line, on sessions real clients recorded.

The figures in the summary are Qwen Code's own (`expected.json` of the recording, its
`/doctor memory --json` answer); the summary stays a few hundred tokens, names a 0600 file with
the full report, shows no payload and no escape; a hook never fails the agent.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys

import pytest

from tests.report.report_support import HOSTILE_TOOL, PAYLOAD_MARKER, RECORDINGS, SECRETS, hostile_session, run_cli

ALARM = RECORDINGS / "qwen" / "oversized-alarm"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for name in ("QWEN_HOME", "QWEN_CODE_SESSION_ID", "QWEN_CODE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "DOCTOR_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _full_report(summary: str):
    from pathlib import Path

    return Path(re.search(r"Full report \(mode 0600\): (\S+)", summary).group(1))


def test_summary_carries_qwens_figures_and_names_the_full_report(capsys):
    qwen = json.loads((ALARM / "expected.json").read_text())["toolResultRetention"]
    code, out, _ = run_cli(capsys, "slash", "qwen", "--transcript", ALARM / "session.jsonl")
    assert code == 0
    assert (f"{qwen['toolResultCount']} results, {qwen['totalChars']:,} chars retained" in out
            and f"{qwen['oversizedResultCount']} oversized" in out), out
    assert out.count("OVERSIZED") == min(3, qwen["oversizedResultCount"])
    assert len(out) < 2400  # ≈ 600 tokens at most: it joins the model's context
    full = _full_report(out)
    assert full.stat().st_mode & 0o777 == 0o600
    assert f"Total retained: {qwen['totalChars']} chars" in full.read_text()  # Qwen's own line, in the file


def test_the_qwen_session_comes_from_the_environment_qwen_sets(tmp_path, capsys, monkeypatch):
    data = tmp_path / "home" / ".qwen" / "projects" / "-w"
    (data / "chats").mkdir(parents=True)
    shutil.copy(ALARM / "session.jsonl", data / "chats" / "s-1.jsonl")
    monkeypatch.setenv("QWEN_CODE_SESSION_ID", "s-1")
    monkeypatch.setenv("QWEN_CODE_PROJECT_DIR", str(data))
    code, out, _ = run_cli(capsys, "slash", "qwen", "--args=--top 1")
    assert code == 0 and "  1. " in out and "  2. " not in out
    monkeypatch.setenv("QWEN_CODE_SESSION_ID", "s-2")
    code, out, _ = run_cli(capsys, "slash", "qwen")
    assert (code, out) == (0, "doctor: session s-2 has no transcript yet (its first prompt); "
                              "run /doctor:memory again after a turn.\n")


def test_summary_is_paste_safe(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "slash", "qwen", "--transcript", hostile_session(tmp_path))
    assert code == 0
    assert PAYLOAD_MARKER not in out and not any(secret in out for secret in SECRETS.values())
    assert "\x1b" not in out and "\u202e" not in out and HOSTILE_TOOL not in out
    assert "1. evil<b>[bold]tool|x: " in out  # the name, its escape sequence removed


@pytest.mark.parametrize("typed", ["--bogus", "--top zero", "--top 99", "--paths sideways", "'unclosed"])
def test_bad_arguments_get_one_line_and_exit_2(typed, capsys):
    code, out, _ = run_cli(capsys, "slash", "qwen", f"--args={typed}")  # checked before any session is looked for
    assert code == 2 and out.count("\n") == 1 and "Usage: /doctor:memory" in out


def _hook(capsys, monkeypatch, payload) -> tuple[int, str, str]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    return run_cli(capsys, "hook", "codex")


# `$doctor-memory`: doctor's skill, what Codex's interactive app sends; `/doctor:memory`: what `codex exec` passes on
@pytest.mark.parametrize("typed", ["$doctor-memory", "/doctor:memory"])
def test_prompt_hook_answers_doctor_memory_with_additional_context(typed, capsys, monkeypatch):
    transcript = next((RECORDINGS / "codex" / "big-outputs").rglob("rollout-*.jsonl"))
    code, out, _ = _hook(capsys, monkeypatch, {"hook_event_name": "UserPromptSubmit", "prompt": f"{typed} --top 1",
                                               "session_id": "x", "transcript_path": str(transcript)})
    answer = json.loads(out)["hookSpecificOutput"]
    assert code == 0 and answer["hookEventName"] == "UserPromptSubmit"
    assert "doctor memory — codex session" in answer["additionalContext"] and "  2. " not in answer["additionalContext"]
    # what the other agents' command files say after the summary, so Codex's model shows it too
    assert answer["additionalContext"].endswith(
        "\nShow the doctor summary above to the user as it is, then stop; do not run any tool.")


@pytest.mark.parametrize("payload", [
    {"hook_event_name": "UserPromptSubmit", "prompt": "fix the bug"},
    {"hook_event_name": "UserPromptSubmit", "prompt": "/doctor:memoryx"},
    {"hook_event_name": "UserPromptSubmit", "prompt": "$doctor-memoryx"},
    {"hook_event_name": "UserPromptSubmit", "prompt": "what does $doctor-memory do?"},
    {"hook_event_name": "SessionStart"},
    b"not json at all",
    b"[1, 2]",
])
def test_hook_stays_out_of_the_way(payload, capsys, monkeypatch):
    code, out, _ = _hook(capsys, monkeypatch, payload)
    assert (code, out) == (0, "")


def test_doctor_memory_opens_a_session_by_its_id(tmp_path, capsys, monkeypatch):
    claude = RECORDINGS / "claude" / "big-outputs"
    monkeypatch.setenv("HOME", str(claude / "home"))
    session = json.loads((claude / "meta.json").read_text())["sessionId"]
    code, out, _ = run_cli(capsys, "memory", "--session", session, "--agent", "claude", "--json")
    assert code == 0 and json.loads(out)["source"]["sessionId"] == session
    code, _, err = run_cli(capsys, "memory", "--session", "no-such-id", "--json")
    assert code == 2 and "no session with this id" in err


def _as_qwens_session(tmp_path, monkeypatch, session) -> None:
    """`session` as the one Qwen names in the environment of a command it runs (QWEN_CODE_*)."""
    data = tmp_path / "home" / ".qwen" / "projects" / "-w"
    (data / "chats").mkdir(parents=True)
    shutil.copy(session, data / "chats" / "s-1.jsonl")
    monkeypatch.setenv("QWEN_CODE_SESSION_ID", "s-1")
    monkeypatch.setenv("QWEN_CODE_PROJECT_DIR", str(data))


def test_a_tiny_result_is_under_a_hundredth_of_its_budget_not_none(tmp_path, capsys, monkeypatch):
    """A 57-char result against a 20,000-char budget is 0.003×: "0.00×" would read as nothing at all."""
    session = RECORDINGS / "qwen" / "multi-turn" / "session.jsonl"
    code, out, _ = run_cli(capsys, "memory", session, "--json", "--top", "50")
    rows = json.loads(out)["retention"]["largest"]
    tiny = [row for row in rows if row["budget"]["chars"] and 0 < row["rawChars"] * 200 < row["budget"]["chars"]]  # < 0.005×
    assert tiny and len(rows) <= 50
    _as_qwens_session(tmp_path, monkeypatch, session)
    code, out, _ = run_cli(capsys, "slash", "qwen", "--args=--top 50")
    assert code == 0 and "0.00×" not in out
    assert out.count("<0.01× budget") == len(tiny), out
    code, text, _ = run_cli(capsys, "memory", session, "--top", "50")  # the full text report's table
    assert "0.00×" not in text and text.count("<0.01×") == len(tiny)


def test_the_command_files_form_reads_no_file_it_names(tmp_path, capsys):
    """The agents' rules let `doctor slash AGENT --args=…` run unasked: a `--transcript` after the typed word
    (what a steered model would add) is refused before any file is opened."""
    secret = tmp_path / "secret.jsonl"
    secret.write_text(ALARM.joinpath("session.jsonl").read_text())
    code, out, err = run_cli(capsys, "slash", "qwen", "--args=", "--transcript", secret)
    assert (code, out) == (2, "") and "--transcript is not taken with --args" in err
