"""Hostile sessions against the figures model: a record cannot set its own turn.

Readers mark where a typed prompt starts with a key of their own (`doctor.core.turns.TURN`) on the
Contents they build. A Qwen record's message or a Codex item is copied into the history, so a
file that carries that key itself must not decide a result's turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from doctor.core.turns import TURN

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"


def turns(path: Path) -> set[int]:
    run = subprocess.run([sys.executable, "-m", "doctor", "memory", str(path), "--json", "--results"],
                         capture_output=True, text=True, timeout=120, env={"HOME": "/nonexistent", "PATH": "/usr/bin:/bin"})
    assert run.returncode in (0, 3), run.stderr
    return {result["turn"] for result in json.loads(run.stdout)["retention"]["results"]}


def test_a_qwen_record_cannot_name_its_turn(tmp_path):
    """Messages and a compression's compressedHistory (copied into the history as they stand)."""
    lines = (RECORDINGS / "qwen" / "compress-fast" / "session.jsonl").read_text().splitlines()
    planted = []
    for line in lines:
        record = json.loads(line)
        if isinstance(record.get("message"), dict):
            record["message"][TURN] = 99
        for content in (record.get("systemPayload") or {}).get("compressedHistory") or ():
            content[TURN] = 99
        planted.append(json.dumps(record))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(planted) + "\n")
    assert turns(path) == {1, 2}


def test_a_codex_item_cannot_name_its_turn(tmp_path):
    rollout = next((RECORDINGS / "codex" / "parallel-and-errors" / "home").rglob("rollout-*.jsonl"))
    planted = []
    for line in rollout.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "response_item":
            record["payload"][TURN] = 99
        planted.append(json.dumps(record))
    path = tmp_path / rollout.name
    path.write_text("\n".join(planted) + "\n")
    assert turns(path) == {1}
