"""Lines a stranger can put past the head of a session file, where format detection now parses a short line
whole (the stdlib parser, `sniffing._whole_line`) instead of scanning it: nesting too deep for a recursive
parser, 21,000 objects in 63 KB, a byte-order mark, NaN, two values on a line, NUL bytes.

Each agent's real recording gets a 100 KB first prompt (so the head ends inside it and every later line is
read from the stream) and the hostile lines right after it. Through the CLI as a subprocess: the session is
still recognised as its agent with the figures of the same file without those lines, each line is an input
issue (exit 3), memory stays bounded, no traceback; `doctor scan` stores it as that agent's session.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from doctor.sources import sniffing

from .peak_support import doctor_with_peak

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
SESSIONS = {  # each agent's recording whose first prompt is "go"
    "qwen": RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl",
    "claude": next(RECORDINGS.glob("claude/big-outputs/home/.claude/projects/*/*.jsonl")),
    "codex": next(RECORDINGS.glob("codex/big-outputs/home/.codex/sessions/*/*/*/*.jsonl")),
    "gemini": next(RECORDINGS.glob("gemini/big-outputs/home/.gemini/tmp/*/chats/*.jsonl")),
}
HOSTILE = [
    b"[" * 30_000 + b"]" * 30_000,  # a recursive parser's stack: RecursionError
    b"[" * 40_000,  # the same, never closed
    b"[" + b"{}," * 21_000 + b"{}]",  # 21,001 objects from 63 KB
    b'\xef\xbb\xbf{"type": "user"}',  # a byte-order mark, which json.loads skips in bytes
    b'{"type": NaN}',  # no JSON token
    b'{"type": "user"} {"type": "user"}',  # two values
    b"\x00" * 100,
]
PARTIAL_INPUT = 3
BOUND = 200 << 20


def _copies(source: Path, folder: Path) -> tuple[Path, Path]:
    """(the recording with a 100 KB first prompt, the same with HOSTILE after that prompt's line)."""
    prompt = json.dumps("go\n" + "x" * 100_000).encode()
    lines = [line.replace(b'"go"', prompt, 1) for line in source.read_bytes().split(b"\n")]
    first = next(index for index, line in enumerate(lines) if prompt in line)
    assert sum(map(len, lines[:first])) < sniffing.HEAD_BYTES < sum(map(len, lines[:first + 1]))
    assert all(len(line) < sniffing.CHUNK for line in HOSTILE)  # each is parsed whole by detection
    plain, hostile = folder / "plain" / source.name, folder / "hostile" / source.name
    for path, body in ((plain, lines), (hostile, lines[:first + 1] + HOSTILE + lines[first + 1:])):
        path.parent.mkdir()
        path.write_bytes(b"\n".join(body))
    return plain, hostile


@pytest.mark.parametrize("agent", sorted(SESSIONS))
def test_hostile_lines_past_the_head_are_input_issues_not_a_crash(tmp_path, agent):
    plain, hostile = _copies(SESSIONS[agent], tmp_path)
    clean = json.loads(doctor_with_peak(tmp_path, "memory", "--json", str(plain))[0].stdout)
    done, peak = doctor_with_peak(tmp_path, "memory", "--json", str(hostile))
    assert done.returncode == PARTIAL_INPUT, done.stderr.decode()
    assert peak < BOUND, f"peak RSS {peak >> 20:,} MiB"
    report = json.loads(done.stdout)
    assert report["source"]["agent"] == clean["source"]["agent"] == agent
    assert report["toolResultRetention"] == clean["toolResultRetention"]
    assert len(report["issues"]) > len(clean["issues"])

    done, _ = doctor_with_peak(tmp_path, "scan", "--db", str(tmp_path / "t.duckdb"), str(hostile.parent))
    assert done.returncode == 0, done.stderr.decode()
    with duckdb.connect(str(tmp_path / "t.duckdb"), read_only=True) as db:
        assert db.execute("SELECT status, reason FROM files").fetchall() == [("ok", None)]
        assert db.execute("SELECT agent, tool_results FROM sessions").fetchall() == [
            (agent, clean["toolResultRetention"]["toolResultCount"])]
