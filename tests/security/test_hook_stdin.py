"""A hook's stdin is capped: one payload cannot make `doctor hook` hold what it likes in memory.

The agent hands the hook every tool output; a tool output is whatever the tool (or whoever controls what it
read) printed. Over the cap the hook reads the rest without keeping it, says so in one line on stderr, answers
nothing and exits 0 (a hook must never stand in the agent's way)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.commands.hook import STDIN_CAP
from tests.integrations.hook_payloads import payloads

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "recordings" / "gemini" / "big-outputs"


def _hook(payload: bytes, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "doctor.cli", "hook", "gemini"], input=payload, cwd=ROOT, env=env,
                          capture_output=True, timeout=120)


def _grep_payload(chars: int) -> bytes:
    """A Gemini AfterTool payload from the recording whose grep output is `chars` long."""
    landed = next(payloads("gemini", RECORDING)).payload
    line = "src/module.py:12: match\n"
    text = (line * (chars // len(line) + 1))[:chars]
    return json.dumps({**landed, "tool_name": "grep_search", "tool_response": {"llmContent": text}}).encode()


def test_a_payload_under_the_cap_is_judged(tmp_path: Path) -> None:
    done = _hook(_grep_payload(1 << 20), tmp_path)
    assert done.returncode == 0 and "grep_search" in json.loads(done.stdout)["systemMessage"]


@pytest.mark.slow
def test_a_payload_over_the_cap_is_not_read(tmp_path: Path) -> None:
    payload = _grep_payload(STDIN_CAP + (1 << 20))
    assert len(payload) > STDIN_CAP
    done = _hook(payload, tmp_path)
    assert done.returncode == 0 and done.stdout == b""
    assert done.stderr.decode().strip() == "doctor hook: the hook's input is over 64 MiB; not read"
