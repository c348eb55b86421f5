"""Gemini's MCP `memory_report` agrees with itself about its display copies (issue 23 item 7).

Gemini CLI keeps a shell command's whole output as the call's display (`resultDisplay`) while the
model gets it cut ("Output too large. Showing first …"). On the real recording
tests/recordings/gemini/raised-limit (threshold raised to 200,000: `seq 1 100000`'s 588,894 chars
were cut for the model, their display kept whole) nothing the model got is over Gemini's limits, so
the summary an MCP client receives must not call that display copy an oversized output. Spoken to
through the MCP SDK's stdio client, the session served from Gemini's own home; the figures come
from `doctor memory --json` of the same file.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.integrations.test_agent_words import RECORDINGS, _env, _mcp

RAISED = RECORDINGS / "gemini" / "raised-limit"
SESSION = next((RAISED / "home").rglob("session-*.jsonl"))


def test_geminis_memory_report_says_the_model_got_the_displayed_output_cut(tmp_path):
    (tmp_path / "home").mkdir()
    done = subprocess.run([sys.executable, "-m", "doctor", "memory", str(SESSION), "--json"], capture_output=True,
                          text=True, timeout=120, env={**_env(tmp_path), "GEMINI_CLI_HOME": str(RAISED / "home")})
    figures = json.loads(done.stdout)["toolResultRetention"]
    assert figures["oversizedResultCount"] == 0 and figures["largeOutputsInUIHistory"] == 1
    [report] = _mcp(tmp_path, [("memory_report", {"session": str(SESSION)})], GEMINI_CLI_HOME=str(RAISED / "home"))
    summary = "".join(part.text for part in report.content if part.type == "text")
    assert "0 over Gemini CLI's limits" in summary, summary
    assert "oversized" not in summary.replace("0 over", "").lower(), summary  # nothing the model got is
    assert ("1 tool output over twice its limit is kept whole as a display (resultDisplay) by Gemini CLI and held "
            "in memory outside the model's context (the model got it cut).") in " ".join(summary.split())
