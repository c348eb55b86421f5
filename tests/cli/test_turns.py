"""One meaning of "turn" in every agent and face: the n-th prompt the person typed and sent to the model.

The expected turn of each tool result is derived here from the raw recording, without doctor's
readers: the prompts each recording was made with (its `record.py` run, or for a published
session the prompts a person reads in it) are found by their text in the file, in order, and a
result's turn is how many of them came before its call. Local commands (`/compact`, `/mcp`) are
not prompts: the model never gets them. doctor's `--json --results`, its text report and the
triage database must all say the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
RECORDINGS = TESTS / "recordings"
PUBLIC = TESTS / "fixtures" / "public"


def _one(folder: Path, pattern: str) -> Path:
    (found,) = sorted(path for path in folder.rglob(pattern) if "subagents" not in path.parts)
    return found


# (agent, session file, the typed prompts in order: the start of each one's text)
CASES = [
    *(("claude", _one(RECORDINGS / "claude" / name / "home", "*.jsonl"), ["go"])
      for name in ("big-outputs", "limits", "parallel-and-errors", "raised-limits", "subagent")),
    # -p go, then --resume -p /compact (a local command: not sent as a prompt), then --resume -p 'go on'
    ("claude", _one(RECORDINGS / "claude" / "compact" / "home", "*.jsonl"), ["go", "go on"]),
    # an interrupt notice and a /mcp local command between the two prompts
    ("claude", PUBLIC / "claude-code" / "spotter-tool_heavy.jsonl",
     ["start phoenix in background", "scrolling back in xterm.js"]),
    ("claude", PUBLIC / "claude-code" / "spotter-short.jsonl", ["mix phx.server doesnt seem to start"]),
    # Claude Code 1.0.108: a prompt command (/orchestrator), whose expansion is an isMeta record
    ("claude", PUBLIC / "claude-code" / "ccviewer-5c0375b4-v1.0.108-inline-sidechain.jsonl",
     ["<command-message>orchestrator is running"]),
    # a subagent's own file: its prompt comes from the model, not the person
    ("claude", PUBLIC / "claude-code" / "spotter-subagent-agent-aac57f5.jsonl", []),
    *(("codex", _one(RECORDINGS / "codex" / name / "home", "rollout-*.jsonl"), ["go"])
      for name in ("big-outputs", "parallel-and-errors", "raised-limit")),
    ("codex", PUBLIC / "codex" / "yoavf-codex-pomodor-timer.jsonl",
     ["Build a simple Pomodoro timer", "add smooth transitions", "add a Pause/Resume feature"]),
    *(("gemini", _one(RECORDINGS / "gemini" / name / "home", "session-*.jsonl"), ["go"])
      for name in ("big-outputs", "parallel-and-errors", "raised-limit")),
    ("gemini", PUBLIC / "gemini-cli" / "yoavf-gemini-cli-pomodoro-timer.json",
     ["Build a simple Pomodoro timer", "add smooth transitions", "add a Pause/Resume feature",
      "Anything else we should add?", "Add a visual progress bar"]),
    ("gemini", PUBLIC / "gemini-cli" / "aim-session-2026-03-18T01-56-3afe7bdc.json",
     ["What was the 'Mental Model'", "A.I.M. initialization check"]),
    *(("qwen", RECORDINGS / "qwen" / name / "session.jsonl", ["go"])
      for name in ("batch-budget", "errors", "images", "orphaned", "oversized-alarm", "persist-gate",
                   "shell-truncation", "ui-history", "unicode")),
    ("qwen", RECORDINGS / "qwen" / "multi-turn" / "session.jsonl", ["turn one", "turn two", "turn three"]),
    # a /compress-fast run between the prompts (a chat_compression record, no prompt)
    ("qwen", RECORDINGS / "qwen" / "compress-fast" / "session.jsonl", ["turn one", "turn three"]),
    # 'turn two' was rewound away: the chain goes from 'turn one' to 'turn three'
    ("qwen", RECORDINGS / "qwen" / "rewind" / "session.jsonl", ["turn one", "turn three"]),
]


def _texts(content) -> list[str]:
    """Every text of a message content (a string, or text parts / blocks), as the file holds it."""
    if isinstance(content, str):
        return [content]
    texts = []
    for item in content if isinstance(content, list) else ():
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
    return texts


def _events(agent: str, path: Path):
    """("text", text) for each user text and ("call", id) for each tool call, in file order."""
    raw = path.read_text(encoding="utf-8")
    if agent == "gemini" and path.suffix == ".json":
        records = json.loads(raw)["messages"]
    else:
        records = [json.loads(line) for line in raw.splitlines() if line.strip()]
    for record in records:
        if agent == "claude":
            message = record.get("message") or {}
            if record.get("type") == "user" and not record.get("isMeta"):
                yield from (("text", text) for text in _texts(message.get("content")))
            for block in message.get("content") if isinstance(message.get("content"), list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    yield "call", block["id"]
        elif agent == "codex":
            item = record.get("payload") if record.get("type") == "response_item" else None
            if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
                yield from (("text", text) for text in _texts(item.get("content")))
            elif isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call"):
                yield "call", item["call_id"]
        elif agent == "gemini":
            messages = record["$set"]["messages"] if isinstance(record.get("$set"), dict) and "messages" in record["$set"] \
                else [record]
            for message in messages:
                if message.get("type") == "user":
                    yield from (("text", text) for text in _texts(message.get("content")))
                for call in message.get("toolCalls") or ():
                    yield "call", call["id"]
        else:  # qwen
            parts = (record.get("message") or {}).get("parts") or []
            if record.get("type") == "user":
                yield from (("text", text) for text in _texts(parts))
            for part in parts:
                if isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
                    yield "call", part["functionCall"]["id"]


def expected_turns(agent: str, path: Path, prompts: list[str]) -> dict[str, int]:
    """call id -> how many of `prompts` (found in order, each once) came before the call."""
    turns: dict[str, int] = {}
    found = 0
    for kind, value in _events(agent, path):
        if kind == "text":
            if found < len(prompts) and value.strip().startswith(prompts[found]):
                found += 1
        else:
            turns.setdefault(value, found)
    assert found == len(prompts), f"{path}: found {found} of the prompts {prompts}"
    return turns


def doctor(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env={"HOME": "/nonexistent", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("agent, path, prompts", CASES, ids=[f"{a}:{p.parent.parent.name if p.name == 'session.jsonl' else p.name[:40]}"
                                                              for a, p, _ in CASES])
def test_each_result_is_in_the_turn_of_the_prompt_it_answers(agent, path, prompts):
    expected = expected_turns(agent, path, prompts)
    run = doctor("memory", path, "--json", "--results")
    assert run.returncode in (0, 3), run.stderr
    data = json.loads(run.stdout)
    assert data["source"]["agent"] == agent
    results = data["retention"]["results"]
    assert results, "a recording with tool results"
    assert {result["callId"]: result["turn"] for result in results} == \
        {result["callId"]: expected[result["callId"]] for result in results}
    chart = {row["turn"]: row["chars"] for row in data["retention"]["perTurn"]}
    assert set(chart) == {result["turn"] for result in results}


def test_the_text_report_names_the_same_turn():
    """Claude's compact recording: 'go on', the second prompt, was "turn 5" (meta, summary, caveat and the
    local command's records each counted); the results after the compaction belong to turn 2."""
    path = _one(RECORDINGS / "claude" / "compact" / "home", "*.jsonl")
    expected = set(expected_turns("claude", path, ["go", "go on"]).values())
    text = doctor("memory", path, "--format", "text").stdout
    header, *rows = text.split("\nLargest ")[1].split("\n\n")[0].splitlines()[1:]
    turns = {int(row.split()[1]) for row in rows}
    assert turns == {2} and turns <= expected


def test_scan_stores_the_same_turn(tmp_path):
    pytest.importorskip("duckdb")
    agent, path, prompts = CASES[[case[1].name for case in CASES].index("yoavf-codex-pomodor-timer.jsonl")]
    expected = expected_turns(agent, path, prompts)
    db = tmp_path / "triage.duckdb"
    assert doctor("scan", path, "--db", db).returncode in (0, 3)
    run = doctor("scan", "--db", db, "--query", "SELECT turn, count(*) AS n FROM results GROUP BY turn ORDER BY turn",
                 "--format", "json")
    assert run.returncode == 0, run.stderr
    stored = {row["turn"]: row["n"] for row in json.loads(run.stdout)}
    run = doctor("memory", path, "--json", "--results")
    results = json.loads(run.stdout)["retention"]["results"]
    wanted: dict[int, int] = {}
    for result in results:
        wanted[expected[result["callId"]]] = wanted.get(expected[result["callId"]], 0) + 1
    assert stored == wanted and set(stored) == {1, 2, 3}
