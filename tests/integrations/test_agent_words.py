"""Each agent's user reads that agent's words, measure and command in every face doctor answers with.

Through the seams: `doctor slash AGENT` (what `/doctor:memory` runs), `doctor mcp` spoken to with the MCP
SDK's stdio client (`memory_report`, `largest_results`), `doctor hook AGENT` with the payload the client
sends on stdin, and the full text report. The figures are derived from the raw recording
(tests/cli/test_agent_measure.py's helpers); the words are the client's own: its name, its unit, its
token estimate, "limit", `/compact` (Claude Code, Codex CLI) or `/compress` (Gemini CLI). Qwen's
words ("Qwen Code's figures", "UI history", "compression input", "compact the session") never appear.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.cli.test_agent_measure import claude_expected, codex_expected, gemini_expected, js_length
from tests.integrations.hook_payloads import payloads

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
QWEN_WORDS = ("Qwen Code's figures", "as Qwen estimates", "UI history", "compression input", "compact the session")
CLAUDE = next((RECORDINGS / "claude" / "raised-limits" / "home").rglob("af04fce3-*.jsonl"))
GEMINI = next((RECORDINGS / "gemini" / "big-outputs" / "home").rglob("session-*.jsonl"))
CODEX = next((RECORDINGS / "codex" / "big-outputs" / "home").rglob("rollout-*.jsonl"))


def _env(tmp_path: Path, config: str | None = None) -> dict[str, str]:
    env = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": os.environ["PATH"]}
    if config is not None:
        (tmp_path / "doctor.toml").write_text(config)
        env["DOCTOR_CONFIG"] = str(tmp_path / "doctor.toml")
    return env


def _doctor(tmp_path: Path, *args, config: str | None = None, stdin: str | None = None) -> str:
    run = subprocess.run([sys.executable, "-m", "doctor", *map(str, args)], capture_output=True, text=True, timeout=120,
                         env=_env(tmp_path, config), input=stdin)
    assert run.returncode in (0, 3), run.stderr
    return run.stdout


def _totals(expected: dict) -> tuple[int, int]:
    return sum(size for size, _ in expected.values()), sum(tokens for _, tokens in expected.values())


def test_the_summary_speaks_each_agents_words(tmp_path):
    cases = [("claude", CLAUDE, claude_expected(CLAUDE), "Claude Code", "chars", "/compact", None),
             ("gemini", GEMINI, gemini_expected(GEMINI), "Gemini CLI", "chars", "/compress", None),
             # a team's budget in doctor's config makes Codex's 6,585-byte output oversized: its command then shows
             ("codex", CODEX, codex_expected(CODEX), "Codex CLI", "bytes", "/compact", "[budgets]\nexec_command = 5000\n")]
    for agent, path, expected, client, unit, command, config in cases:
        summary = _doctor(tmp_path, "slash", agent, "--transcript", path, config=config)
        size, tokens = _totals(expected)
        assert (f"Tool results in {client}'s context: {len(expected)} results, {size:,} {unit} sent "
                f"(≈{tokens:,} tokens by {client}'s estimate)") in summary, summary
        assert f"run {command} in {client} to reclaim that space" in summary, summary
        assert "OVERSIZED" in summary and "× limit" in summary and "× budget" not in summary
        assert not any(word in summary for word in QWEN_WORDS), summary


def test_the_full_report_has_no_qwen_words_but_its_labelled_estimator(tmp_path):
    text = _doctor(tmp_path, "memory", CLAUDE, "--format", "text")
    assert not any(word in text for word in QWEN_WORDS)
    assert "Tool results in Claude Code's context" in text and "Tool result retention\n" not in text
    assert "Qwen Code's estimator, for comparing agents:" in text and "Qwen est. chars" in text
    assert "/compact in Claude Code can reclaim space" in text and "/compress" not in text
    qwen = _doctor(tmp_path, "memory", RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl", "--format", "text")
    assert "Oversized also in compression input" in qwen and "/compress can reclaim space" in qwen  # Qwen's own


def _mcp(tmp_path: Path, calls: list[tuple[str, dict]], **env: str) -> list:
    """`doctor mcp` answering `calls`; `env` adds to the server's environment (an agent's home, whose
    session folders are the only ones it reads)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "doctor", "mcp"],
                                   env={**_env(tmp_path), **env}, cwd=str(tmp_path))

    async def run():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [await session.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(asyncio.wait_for(run(), 60))


def test_mcp_answers_in_geminis_words_and_measure(tmp_path):
    (tmp_path / "home").mkdir()
    report, largest = _mcp(tmp_path, [("memory_report", {"session": str(GEMINI)}),
                                      ("largest_results", {"session": str(GEMINI), "top": 8})],
                           GEMINI_CLI_HOME=str(RECORDINGS / "gemini" / "big-outputs" / "home"))
    summary = "".join(part.text for part in report.content if part.type == "text")
    expected = gemini_expected(GEMINI)
    size, tokens = _totals(expected)
    assert f"{size:,} chars sent (≈{tokens:,} tokens by Gemini CLI's estimate)" in summary
    assert "/compress in Gemini CLI" in summary and not any(word in summary for word in QWEN_WORDS)
    answer = largest.structured_content
    assert answer["measure"]["unit"] == "chars" and answer["measure"]["tokenEstimate"].startswith("Gemini CLI's estimate")
    rows = {row["ordinal"]: row for row in answer["results"]}
    assert len(rows) == len(expected)
    assert sorted((row["sent"], row["sentTokens"]) for row in rows.values()) == sorted(expected.values())


def test_codex_alarm_counts_bytes_at_the_margin(tmp_path):
    """The hook holds Codex's output (as Codex hands it, without the exec header) to a budget in bytes: one
    with "…" in it (3 bytes, 1 char) just over the budget by its bytes alarms, in bytes and Codex's tokens."""
    folder = RECORDINGS / "codex" / "big-outputs"
    landed = max((item for item in payloads("codex", folder) if not item.payload["tool_response"].isascii()),
                 key=lambda item: len(item.payload["tool_response"]))
    text = landed.payload["tool_response"]
    size, chars = len(text.encode("utf-8")), js_length(text)
    header = 1000
    answers = []
    for budget in (size - header - 1, size - header):
        assert chars <= budget + header  # a UTF-16 count would never alarm here
        out = _doctor(tmp_path, "hook", "codex", config=f"[budgets]\nexec_command = {budget}\n",
                      stdin=json.dumps(landed.payload))
        answers.append(json.loads(out) if out.strip() else None)
    alarm, silent = answers
    assert silent is None
    assert (f"doctor: Bash returned {size:,} bytes (≈{-(-size // 4):,} tokens), over doctor's "
            f"{size - header - 1:,}-byte budget + 1,000 bytes of Codex CLI's header ([budgets] exec_command in "
            ) in alarm["systemMessage"]


def test_follow_prints_the_agents_measure(tmp_path):
    """`doctor memory --follow` (its text face) on a Codex rollout: the line says bytes sent and Codex's tokens."""
    import signal
    import time

    follower = subprocess.Popen([sys.executable, "-m", "doctor", "memory", "--follow", str(CODEX)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
    try:
        deadline = time.monotonic() + 30
        line = ""
        while "tool results" not in line and time.monotonic() < deadline:
            line = follower.stdout.readline()
        follower.send_signal(signal.SIGINT)
        follower.communicate(timeout=30)
    finally:
        if follower.poll() is None:
            follower.kill()
    size, tokens = _totals(codex_expected(CODEX))
    assert f"4 tool results, {size:,} bytes sent (≈{tokens:,} tokens by Codex CLI's estimate)" in line, line
