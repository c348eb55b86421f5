"""`doctor whatif … --json` as a user runs it, on the Claude Code, Gemini CLI and Codex what-if recordings.

The recording's HOME is the process's HOME, so doctor reads the settings the client read; `--set` puts the
session under another recording's settings, and every result `changes[]` calls known must be what the
scripted model received in that other recording.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.whatif.agent_recordings import RECORDINGS, recording

CASES = [  # (agent, recorded under, --set …, the recording made under those settings)
    ("claude", "default", ["bashOutputMaxChars=50000"], "bash-50000"),
    ("claude", "bash-128000", ["bashOutputMaxChars=default", "BASH_MAX_OUTPUT_LENGTH=100000"], "read-back-100000"),
    ("gemini", "threshold-150000", ["tools.truncateToolOutputThreshold=10000"], "threshold-10000"),
    ("gemini", "threshold-10000", ["tools.truncateToolOutputThreshold=default"], "default"),
    ("codex", "limit-50000", ["tool_output_token_limit=1000"], "limit-1000"),
    ("codex", "default", ["tool_output_token_limit=12000"], "limit-12000"),
]


def whatif(agent: str, variant: str, *args: str) -> subprocess.CompletedProcess:
    rec = recording(agent, variant)
    env = {"HOME": str(rec.folder / "home"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "doctor", "whatif", str(rec.session_file), *args],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize(("agent", "source", "sets", "target"), CASES)
def test_whatif_json_gives_what_the_model_received_under_those_settings(agent, source, sets, target):
    done = whatif(agent, source, *(arg for key in sets for arg in ("--set", key)), "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"before", "after", "changes", "saved"}
    other = recording(agent, target)
    known = [change for change in answer["changes"] if change["known"]]
    assert known, "nothing was replayed"
    for change in answer["changes"]:
        if change["known"]:
            assert change["afterChars"] == other.received(change["callId"])["last"]["chars"], change
        else:
            assert change["why"] and change["afterCharsRange"][0] <= change["afterChars"]
    after_rows = {row["callId"]: row["rawChars"] for row in answer["after"]["retention"]["largest"]}
    for change in known:
        if change["callId"] in after_rows:
            assert after_rows[change["callId"]] == change["afterChars"]
    assert answer["saved"]["resultsUnknown"] == len(answer["changes"]) - len(known)


@pytest.mark.parametrize(("agent", "key", "theirs"), [
    ("claude", "tools.truncateToolOutputThreshold", "bashOutputMaxChars, BASH_MAX_OUTPUT_LENGTH"),
    ("gemini", "tools.truncateToolOutputLines", "tools.truncateToolOutputThreshold"),
    ("codex", "bashOutputMaxChars", "tool_output_token_limit"),
])
def test_a_key_the_agent_does_not_have_is_refused_with_the_keys_it_has(agent, key, theirs):
    variant = {"claude": "default", "gemini": "default", "codex": "default"}[agent]
    done = whatif(agent, variant, "--set", f"{key}=1000", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert key in done.stderr and theirs in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("agent", "tool", "key", "sizes"), [
    # the smallest value keeping each result whole, from the outputs the script printed (README beside them)
    ("claude", "Bash", "bashOutputMaxChars", (5_100, 20_400, 45_900, 47_000, 102_000, 153_000)),
    ("gemini", "run_shell_command", "tools.truncateToolOutputThreshold",
     (5_174, 20_474, 45_974, 25_574, 102_074, 163_274)),
    ("codex", "exec_command", "tool_output_token_limit", (1_275, 5_100, 11_475, 25_500, 11_750, 1_620)),
])
def test_recommend_sizes_each_tool_by_the_agents_own_key(agent, tool, key, sizes):
    done = whatif(agent, "default", "--recommend", "--keep", "0.5", "--json")
    assert done.returncode == 0, done.stderr
    row = next(item for item in json.loads(done.stdout)["tools"] if item["tool"] == tool)
    ranked = sorted(sizes)
    assert (row["key"], row["budget"]) == (key, ranked[-(-len(ranked) // 2) - 1])
    assert row["largestRawChars"] == ranked[-1]


def test_gemini_output_masking_is_replayed_as_the_cli_masked():
    """big-outputs: Gemini CLI 0.61.0 masked five older results before its 9th request (the recording's notes).
    Replayed under the settings it ran under, each result is exactly what the model got (masked where the CLI
    masked); with the protection raised past the session's tokens none is masked."""
    session = next((RECORDINGS / "gemini" / "big-outputs" / "home").rglob("session-*.jsonl"))
    env = {"HOME": str(RECORDINGS / "gemini" / "big-outputs" / "home"), "PATH": "/usr/bin:/bin"}

    def run(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "doctor", "whatif", str(session), "--json", *args],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    recorded = run()
    masked = recorded["before"]["retention"]["layers"]["persistence gate"]
    assert masked == recorded["saved"]["resultsCut"] == recorded["saved"]["resultsCutBefore"] > 0
    assert all(c["known"] and c["afterChars"] == c["beforeChars"] for c in recorded["changes"])
    unmasked = run("--set", "contextManagement.tools.outputMasking.protectionThresholdTokens=1000000000")
    grown = [c for c in unmasked["changes"] if c["afterChars"] > c["beforeChars"]]
    assert len(grown) == masked and all(c["known"] and c["afterLayer"] != "persistence gate" for c in grown)
