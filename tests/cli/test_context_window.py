"""Where the agent tells doctor the model's context window, the status line and the summary say what share
of it the tool results hold (their tokens by the agent's own estimate).

Codex states it in the rollout (`model_context_window` of its `token_count` events, read here from the raw
file); Claude Code and Qwen Code in their status-line payload (`context_window.context_window_size`), which
`doctor statusline` gets on stdin as the client sends it and keeps for the summary `/doctor:memory` prints.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.test_agent_measure import claude_expected, codex_expected, records

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
CLAUDE = next((RECORDINGS / "claude" / "big-outputs" / "home").rglob("298108a5-*.jsonl"))
CODEX = next((RECORDINGS / "codex" / "big-outputs" / "home").rglob("rollout-*.jsonl"))
QWEN = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"


def run(tmp_path: Path, *args, stdin: str | None = None) -> str:
    env = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "doctor", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=env, input=stdin)
    assert done.returncode in (0, 3), done.stderr
    return done.stdout


def percent(share: float) -> str:
    return "<0.1%" if 0 < share < 0.0005 else f"{share:.1%}"


def status_payload(transcript: Path, window: object) -> str:
    """What Claude Code 2.1.332 hands its status-line command (the keys doctor reads, and the window)."""
    return json.dumps({"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": str(transcript.parent),
                       "model": {"id": "claude-sonnet", "display_name": "Sonnet"},
                       "context_window": {"context_window_size": window, "used_percentage": 7}})


def test_codex_rollout_states_the_window_and_the_summary_says_the_share(tmp_path):
    windows = [r["payload"]["info"]["model_context_window"] for r in records(CODEX)
               if r.get("type") == "event_msg" and r["payload"].get("type") == "token_count" and r["payload"].get("info")]
    window = windows[-1]
    tokens = sum(tokens for _, tokens in codex_expected(CODEX).values())
    report = json.loads(run(tmp_path, "memory", CODEX, "--json"))
    assert report["agentMeasure"]["contextWindow"] == {
        "tokens": window, "toldBy": "model_context_window in the rollout's token_count events",
        "share": round(tokens / window, 6)}
    summary = run(tmp_path, "slash", "codex", "--transcript", CODEX)
    assert (f"Tool results hold {percent(tokens / window)} of the model's {window:,}-token context window "
            "(model_context_window in the rollout's token_count events).") in summary


def test_claude_status_line_shows_the_share_and_leaves_it_for_the_summary(tmp_path):
    tokens = sum(tokens for _, tokens in claude_expected(CLAUDE).values())
    before = run(tmp_path, "slash", "claude", "--transcript", CLAUDE)
    assert "context window" not in before  # nothing told it yet
    line = run(tmp_path, "statusline", "claude", stdin=status_payload(CLAUDE, 200_000))
    assert line.endswith(f" · {percent(tokens / 200_000)} of the 200,000-token context\n"), line
    summary = run(tmp_path, "slash", "claude", "--transcript", CLAUDE)
    assert (f"Tool results hold {percent(tokens / 200_000)} of the model's 200,000-token context window "
            "(Claude Code's status line (context_window.context_window_size)).") in summary
    # a window that changes (the user switched models) is the one the summary then says
    run(tmp_path, "statusline", "claude", stdin=status_payload(CLAUDE, 1_000_000))
    assert "1,000,000-token context window" in run(tmp_path, "slash", "claude", "--transcript", CLAUDE)


def test_qwen_status_line_and_summary_in_qwens_figures(tmp_path):
    qwen = json.loads(run(tmp_path, "memory", QWEN, "--json"))
    tokens = qwen["retention"]["totalTokens"]  # Qwen's own estimate: chars ÷ 4
    payload = json.dumps({"session_id": "s", "transcript_path": str(QWEN), "workspace": {"current_dir": str(QWEN.parent)},
                          "context_window": {"context_window_size": 131_072}})
    line = run(tmp_path, "statusline", "qwen", stdin=payload)
    assert line.endswith(f" · {percent(tokens / 131_072)} of the 131,072-token context\n"), line
    summary = run(tmp_path, "slash", "qwen", "--transcript", QWEN)
    assert f"Tool results hold {percent(tokens / 131_072)} of the model's 131,072-token context window" in summary
    assert "agentMeasure" not in qwen  # Qwen's --json is what it was


def test_a_window_doctor_cannot_believe_is_not_shown(tmp_path):
    for window in (0, -5, "200000", True, 1e12, None, 10**12):
        line = run(tmp_path, "statusline", "claude", stdin=status_payload(CLAUDE, window))
        assert "context" not in line and line.startswith("doctor: "), (window, line)
    assert "context window" not in run(tmp_path, "slash", "claude", "--transcript", CLAUDE)
