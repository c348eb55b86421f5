"""The hook's verdict on each result of a real recording equals `doctor memory --json`'s verdict afterwards.

Every tool result of the committed Claude Code, Gemini CLI and Codex recordings is fed to `doctor hook
AGENT` in the payload shape that client sends (tests/integrations/hook_payloads.py), with HOME at the
recording's home, so doctor reads the settings file the client read. The hook must alarm exactly on the
results `doctor memory` then counts as oversized, with the same figure, and name that agent's limit and
where it comes from, never a Qwen setting.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from tests.integrations.hook_payloads import payloads, session_file
from tests.report.report_support import run_cli

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
SCENARIOS = [(agent, folder.name) for agent in ("claude", "gemini", "codex")
             for folder in sorted((RECORDINGS / agent).iterdir()) if (folder / "meta.json").is_file()]
QWEN_WORDS = ("2×", "twice", "shellBudget", "toolOutputBatchBudget")
CLIENTS = {"claude": "Claude Code", "gemini": "Gemini CLI", "codex": "Codex CLI"}
TYPED = {"claude": "/doctor:memory", "gemini": "/doctor:memory", "codex": "$doctor-memory"}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "CODEX_HOME", "DOCTOR_CONFIG",
                 "QWEN_HOME", "MAX_MCP_OUTPUT_TOKENS", "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", "BASH_MAX_OUTPUT_LENGTH"):
        monkeypatch.delenv(name, raising=False)


def hook(capsys, monkeypatch, agent: str, payload: dict) -> dict | None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    code, out, err = run_cli(capsys, "hook", agent, "--tell-model")
    assert code == 0 and err == "", err
    return json.loads(out) if out else None


def verdicts(capsys, monkeypatch, agent: str, folder: Path, home: Path):
    monkeypatch.setenv("HOME", str(home))
    code, out, err = run_cli(capsys, "memory", str(session_file(folder)), "--json", "--top", "100")
    assert code in (0, 3), err
    data = json.loads(out)
    rows = {row["callId"]: row for row in data["retention"]["largest"]}
    assert len(rows) == data["toolResultRetention"]["toolResultCount"]
    oversized = {row["callId"] for row in data["retention"]["oversized"]}
    landed = list(payloads(agent, folder))
    assert landed, folder
    for result in landed:
        # a result compacted away since (Claude's /compact) is not in the history doctor memory measures
        yield result, rows.get(result.call_id), result.call_id in oversized, hook(capsys, monkeypatch, agent, result.payload)


def figure(answer: dict) -> int:
    return int(re.search(r"returned ([\d,]+) (?:chars|bytes)", answer["systemMessage"]).group(1).replace(",", ""))


@pytest.mark.parametrize("agent,name", SCENARIOS)
def test_the_hook_alarms_on_exactly_what_doctor_memory_counts_oversized(capsys, monkeypatch, agent, name):
    folder = RECORDINGS / agent / name
    judged = alarms = 0
    for result, row, oversized, answer in verdicts(capsys, monkeypatch, agent, folder, folder / "home"):
        if result.masked_later or row is None:
            continue  # masked (Gemini) or compacted (Claude) after it landed: doctor memory judges what is left
        judged += 1
        assert (answer is not None) == oversized, (result.call_id, row["rawChars"], answer)
        if answer is None:
            continue
        alarms += 1
        text = answer["systemMessage"] + answer["hookSpecificOutput"]["additionalContext"]
        assert CLIENTS[agent] in text and not any(word in text for word in QWEN_WORDS), text
        # what this agent's user can type to see the session: Codex's app rejects /doctor:memory, its skill is not
        assert answer["systemMessage"].endswith(f"{TYPED[agent]} shows the session.")
        expected = row["rawChars"] if agent != "codex" else len(result.payload["tool_response"])  # Codex: no header
        assert figure(answer) == expected
    assert judged >= 1
    if (agent, name) == ("gemini", "big-outputs"):
        assert alarms == 1  # the 148,405-char read_file: Gemini does not cut read_file output


def test_gemini_read_file_alarm_names_the_threshold_and_its_source(capsys, monkeypatch):
    folder = RECORDINGS / "gemini" / "big-outputs"
    [(row, answer)] = [(row, a) for r, row, _, a in verdicts(capsys, monkeypatch, "gemini", folder, folder / "home")
                       if a and not r.masked_later]
    # the size and tokens doctor memory gives the same result, in Gemini's own measure
    # Gemini cuts no read_file output: the limit is the one doctor holds it to, never called Gemini's own
    assert (f"doctor: read_file returned 148,405 chars (≈{row['sentTokens']:,} tokens), over the 40,000-char limit "
            "doctor holds it to (Gemini CLI cuts none of their output; held to tools.truncateToolOutputThreshold "
            "(built-in default of Gemini CLI 0.61.0") in answer["systemMessage"]
    assert "Gemini CLI's 40,000" not in answer["systemMessage"]


@pytest.mark.parametrize("agent,name", [("claude", "raised-limits"), ("codex", "raised-limit")])
def test_without_the_raised_settings_the_payload_still_shows_what_got_through(capsys, monkeypatch, tmp_path, agent, name):
    """Claude's payload says whether it persisted a Bash output; Codex's is cut already: with the client's
    defaults (an empty HOME) the hook still agrees with `doctor memory` on the results the client let through."""
    folder = RECORDINGS / agent / name
    seen = 0
    for result, row, oversized, answer in verdicts(capsys, monkeypatch, agent, folder, tmp_path):
        assert (answer is not None) == oversized, (result.call_id, row["rawChars"])
        if answer is not None:  # the figure is what the model got: Read with Claude's line numbers, Codex's cut
            # (in the agent's own measure: Codex counts the text's UTF-8 bytes)
            assert figure(answer) == (row["rawChars"] if agent == "claude"
                                      else len(result.payload["tool_response"].encode("utf-8")))
            assert answer["systemMessage"].endswith(f"{TYPED[agent]} shows the session.")
        seen += oversized
    assert seen == 2
