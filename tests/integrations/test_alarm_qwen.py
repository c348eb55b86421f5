"""Qwen's oversized alarm judges what the model gets, after every layer Qwen runs once the hook returned.

The payloads are the ones the real Qwen Code 0.24.4 handed a `PostToolUse` hook in
tests/recordings/qwen/hook-payloads (truncation off: `truncateToolOutputThreshold: -1`), each fed to
`doctor hook qwen --tell-model` as a subprocess with HOME holding that recording's settings. Qwen cut
the grep (41,212 chars handed to the hook) to its 20,000-char budget and the read_file (211,047) to
the 200,000-char batch budget after the hook ran; `doctor memory --json` of the same session, run as
a subprocess under the same settings and doctor config, is the verdict the hook must give: the same
results, the same figure, the spill file Qwen's own notice names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "qwen" / "hook-payloads"
PAYLOADS = [json.loads(line) for line in (RECORDING / "hook-payloads.jsonl").read_text(encoding="utf-8").splitlines()]
# A team's own budgets, in doctor's config file: under them Qwen's cut read_file, the shell and glob
# (both whole with truncation off) are oversized; the grep Qwen cut stays exempt (Qwen's header).
TEAM_BUDGETS = "[budgets]\nread_file = 50000\nglob = 10000\nrun_shell_command = 20000\ngrep_search = 5000\n"


def _env(tmp_path: Path, config: str) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    settings = json.loads((RECORDING / "settings.json").read_text())
    settings.pop("hooks")  # the recording's payload capture
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    (tmp_path / "config.toml").write_text(config)
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "DOCTOR_CONFIG": str(tmp_path / "config.toml"), "LANG": "C.UTF-8"}


def _doctor(env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=120)


def _memory(env: dict) -> dict:
    done = _doctor(env, "memory", str(RECORDING / "session.jsonl"), "--json", "--top", "100", "--paths", "full")
    assert done.returncode in (0, 3), done.stderr
    return json.loads(done.stdout)


def _alarms(env: dict) -> dict[str, dict]:
    answers = {}
    for payload in PAYLOADS:
        done = _doctor(env, "hook", "qwen", "--tell-model", stdin=json.dumps(payload))
        assert done.returncode == 0 and done.stderr == "", done.stderr
        if done.stdout:
            answers[payload["tool_call_id"]] = json.loads(done.stdout)
    return answers


def _figure(answer: dict) -> int:
    return int(re.search(r"returned ([\d,]+) chars", answer["systemMessage"]).group(1).replace(",", ""))


def test_the_recording_is_what_the_hook_was_handed():
    """The payloads are the raw tool output: the grep and read_file are longer than what the model got."""
    rows = {json.loads(line)["message"]["parts"][0]["functionResponse"]["id"]: json.loads(line)
            for line in (RECORDING / "session.jsonl").read_text(encoding="utf-8").splitlines()
            if '"functionResponse"' in line}
    handed = {p["tool_call_id"]: len(p["tool_response"]["llmContent"]) for p in PAYLOADS}
    assert set(handed) == set(rows)
    got = {call: len(r["message"]["parts"][0]["functionResponse"]["response"]["output"]) for call, r in rows.items()}
    grep, read = (next(p["tool_call_id"] for p in PAYLOADS if p["tool_name"] == name) for name in ("grep_search", "read_file"))
    assert handed[grep] > 40_500 >= got[grep] and handed[read] > 200_000 == got[read]


@pytest.mark.parametrize("config", ["", TEAM_BUDGETS], ids=["qwen-settings", "team-budgets"])
def test_the_hook_alarms_on_exactly_what_doctor_memory_counts_oversized(tmp_path, config):
    env = _env(tmp_path, config)
    report = _memory(env)
    rows = {row["callId"]: row for row in report["retention"]["largest"]}
    oversized = {row["callId"] for row in report["retention"]["oversized"]}
    answers = _alarms(env)
    assert set(answers) == oversized
    for call_id, answer in answers.items():
        row = rows[call_id]
        assert _figure(answer) == row["rawChars"]  # what the model got, not what the hook was handed
        written = (row["pointer"] or {}).get("paths", [])
        told = answer["hookSpecificOutput"]["additionalContext"]
        if written:  # the file Qwen's own notice names, under this HOME's Qwen folder
            spill = re.search(r"full output in (\S+)\. /doctor", answer["systemMessage"]).group(1)
            assert Path(spill).relative_to(env["HOME"]) == Path(written[0]).relative_to(json.loads(
                (RECORDING / "meta.json").read_text())["home"])
            assert "page in only the part you need" in told and "Avoid re-running" not in told
    if config:
        assert sorted(rows[c]["tool"] for c in answers) == ["glob", "read_file", "run_shell_command"]
    else:
        assert answers == {}  # the false alarm: the grep Qwen cut to 20,488 chars


def test_what_qwen_cuts_after_the_hook_is_not_told_to_the_model(tmp_path):
    """The grep of the issue: handed 41,212 chars, over 2 × 20,000 + 500, but the model got Qwen's cut."""
    env = _env(tmp_path, "")
    [grep] = [p for p in PAYLOADS if p["tool_name"] == "grep_search"]
    done = _doctor(env, "hook", "qwen", "--tell-model", stdin=json.dumps(grep))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
