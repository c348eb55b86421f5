"""`doctor statusline qwen` on a transcript whose last record Qwen is still writing (issue 23 item 5).

Qwen Code runs its status line when a turn's state changes, often while it appends that turn's
record, and shows what the command printed until its next run. Run as Qwen runs it (a subprocess,
`session_id` and `workspace.current_dir` on stdin, the session in Qwen's own folder) on a real
recording cut in the middle of a tool result's line: the cut record is never counted, and a call
that sees the record completed while it runs prints the figures with it. Expected figures are
`doctor memory --json`'s of the complete lines, and of the whole file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "qwen" / "multi-turn" / "session.jsonl"
LINE = re.compile(r"^doctor: ([\d,]+) chars \(~([\d,]+) tok\) in ([\d,]+) tool results? · ([\d,]+) oversized")


def _setup(tmp_path: Path) -> tuple[dict, Path, dict, list[bytes], int]:
    """HOME with the session where Qwen keeps it; the payload; the lines; the last tool result's line."""
    project = tmp_path / "work"
    chats = tmp_path / "home" / ".qwen" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project)) / "chats"
    chats.mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "LANG": "C.UTF-8"}
    lines = RECORDING.read_bytes().splitlines(keepends=True)
    last_result = max(i for i, line in enumerate(lines) if b'"functionResponse"' in line)
    payload = {"session_id": "abc-123", "workspace": {"current_dir": str(project)}}
    return env, chats / "abc-123.jsonl", payload, lines, last_result


def _figures(text: str) -> tuple:
    match = LINE.match(text)
    assert match, text
    return tuple(int(group.replace(",", "")) for group in match.groups())


def _memory(env: dict, transcript: Path) -> tuple:
    done = subprocess.run([sys.executable, "-m", "doctor", "memory", str(transcript), "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    data = json.loads(done.stdout)
    qwen = data["toolResultRetention"]
    return qwen["totalChars"], data["retention"]["totalTokens"], qwen["toolResultCount"], qwen["oversizedResultCount"]


def _status_line(env: dict, payload: dict) -> subprocess.Popen:
    """The status line started with its stdin written; `_output` waits for what it prints."""
    run = subprocess.Popen([sys.executable, "-m", "doctor", "statusline", "qwen"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    run.stdin.write(json.dumps(payload))
    run.stdin.close()
    return run


def _output(run: subprocess.Popen) -> tuple[str, str]:
    out, err = run.stdout.read(), run.stderr.read()
    assert run.wait(timeout=60) == 0
    return out, err


def test_a_cut_record_is_not_counted_and_a_completed_one_is(tmp_path):
    env, transcript, payload, lines, cut_at = _setup(tmp_path)
    complete = tmp_path / "complete.jsonl"
    complete.write_bytes(b"".join(lines[:cut_at]))
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(lines[:cut_at + 1]))
    before, after = _memory(env, complete), _memory(env, whole)
    assert before != after  # the cut line is a tool result: counting it or not shows
    record = lines[cut_at]
    transcript.write_bytes(b"".join(lines[:cut_at]) + record[: len(record) // 2])

    out, err = _output(_status_line(env, payload))
    assert _figures(out) == before and err == ""  # the half record is not counted

    with open(transcript, "ab") as handle:
        handle.write(record[len(record) // 2:])
    out, _ = _output(_status_line(env, payload))
    assert _figures(out) == after  # and once complete it is, whatever the saved index says


def test_a_record_completed_while_the_line_runs_is_counted(tmp_path):
    """The call Qwen makes mid-write prints the figures with that record: the line does not stay stale
    until the next prompt."""
    env, transcript, payload, lines, cut_at = _setup(tmp_path)
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(lines[:cut_at + 1]))
    after = _memory(env, whole)
    record = lines[cut_at]
    transcript.write_bytes(b"".join(lines[:cut_at]) + record[: len(record) // 2])
    index_folder = tmp_path / "cache" / "doctor" / "statusline"
    run = _status_line(env, payload)
    deadline = time.monotonic() + 60
    # The call saves its index at the last complete line before it looks at the cut one: then the rest comes.
    while not any(index_folder.glob("*.msgpack")) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    with open(transcript, "ab") as handle:
        handle.write(record[len(record) // 2:])
    out, err = _output(run)
    assert _figures(out) == after and err == ""
