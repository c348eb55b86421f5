"""`doctor memory --follow` on real Qwen recordings being written.

The recordings were made by Qwen Code 0.24.4; the tests copy them into a new
file line by line (with torn lines mid-write), then truncate, rewrite and
rotate it, and check after each step that the followed report equals a fresh
`doctor memory` of the same bytes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from doctor.assemble import ReportOptions, report_for_session
from doctor.live.follow import (
    APPENDED,
    OPENED,
    REWRITTEN,
    ROTATED,
    TRUNCATED,
    FileFollower,
    FollowProvider,
    print_changes,
)
from doctor.sources.registry import open_session

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings" / "qwen"
SESSIONS = sorted(RECORDINGS.glob("*/session.jsonl"))
REPO = Path(__file__).resolve().parents[2]


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _fresh(path: Path) -> dict:
    return report_for_session(open_session(path), ReportOptions()).to_dict()["toolResultRetention"]


def _followed(follower: FileFollower) -> dict:
    return follower.report.to_dict()["toolResultRetention"]


@pytest.mark.parametrize("recording", SESSIONS, ids=lambda p: p.parent.name)
def test_follow_matches_a_fresh_read_after_every_line(tmp_path, recording):
    live, snapshot = tmp_path / "live.jsonl", tmp_path / "snapshot.jsonl"
    follower = FileFollower(live)
    lines = _lines(recording)
    reads_at_first_report = 0
    with open(live, "wb") as writer:
        for number, line in enumerate(lines):
            half = len(line) // 2
            writer.write(line[:half])  # the agent mid-write
            writer.flush()
            change = follower.poll()
            if number > 0:
                assert change is None, "a torn line must not change the report"
            writer.write(line[half:])
            writer.flush()
            change = follower.poll()
            if change is None:
                continue  # a line that adds no Qwen record (or no report yet)
            assert change.reason in (OPENED, APPENDED)
            reads_at_first_report = reads_at_first_report or follower.reads_from_start
            snapshot.write_bytes(b"".join(lines[: number + 1]))
            assert _followed(follower) == _fresh(snapshot), f"after line {number + 1}"
            assert not [issue for issue in follower.report.issues if "incomplete" in issue.message]
    assert _followed(follower) == _fresh(recording)
    assert follower.reads_from_start == reads_at_first_report, "appends must extend the index, not re-read the file"


def test_truncation_rewrite_and_rotation(tmp_path):
    recording = RECORDINGS / "multi-turn" / "session.jsonl"
    lines = _lines(recording)
    live, snapshot = tmp_path / "live.jsonl", tmp_path / "snapshot.jsonl"
    live.write_bytes(b"".join(lines))
    follower = FileFollower(live)
    assert follower.poll().reason == OPENED

    half = b"".join(lines[: len(lines) // 2])
    live.write_bytes(half)  # truncated in place (same inode)
    change = follower.poll()
    assert change.reason == TRUNCATED
    snapshot.write_bytes(half)
    assert _followed(follower) == _fresh(snapshot)

    with open(live, "r+b") as handle:  # same size, other bytes just before the read offset
        handle.seek(len(half) - 40)
        handle.write(b" " * 39)
    assert follower.poll().reason == REWRITTEN
    assert any(issue.severity == "warning" for issue in follower.report.issues)  # the spoilt line

    rotated = tmp_path / "next.jsonl"
    rotated.write_bytes(b"".join(lines))
    os.replace(rotated, live)  # a new inode at the same path
    change = follower.poll()
    assert change.reason == ROTATED
    assert _followed(follower) == _fresh(recording)
    assert follower.poll() is None


def test_follow_waits_for_a_file_that_has_no_records_yet(tmp_path):
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"")
    follower = FileFollower(live)
    assert follower.poll() is None and follower.waiting_for
    live.write_bytes(b"".join(_lines(RECORDINGS / "multi-turn" / "session.jsonl")))
    assert follower.poll().reason == OPENED


def test_provider_refresh_while_a_writer_thread_appends(tmp_path):
    recording = RECORDINGS / "multi-turn" / "session.jsonl"
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"")
    lines = _lines(recording)
    live.write_bytes(lines[0])
    provider = FollowProvider(FileFollower(live))
    first = provider.load(lambda fraction, message: None)
    writer = threading.Thread(target=_write_slowly, args=(live, lines[1:], 0.002))
    writer.start()
    reports = [first]
    while writer.is_alive():
        report = provider.refresh()
        if report is not None:
            reports.append(report)
    writer.join()
    final = provider.refresh() or reports[-1]
    assert final.to_dict()["toolResultRetention"] == _fresh(recording)
    counts = [r.qwen_stats.tool_result_count for r in reports]
    assert counts == sorted(counts) and len(set(counts)) > 2


def test_print_changes_prints_a_line_per_change(tmp_path):
    recording = RECORDINGS / "multi-turn" / "session.jsonl"
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(_lines(recording)))
    follower = FileFollower(live)
    out = _Collect()
    polls = iter(range(3))
    print_changes(follower, out, interval=0, stop=lambda: next(polls, None) is None)
    assert len(out.lines) == 1 and "tool results" in out.lines[0] and "opened" in out.lines[0]


def test_print_changes_json_lines_are_inert(tmp_path):
    live = tmp_path / "live.jsonl"
    live.write_bytes((RECORDINGS / "multi-turn" / "session.jsonl").read_bytes())
    hostile = "qwen\u202e\x9b"

    def build(session):
        report = report_for_session(session, ReportOptions())
        return replace(report, source=replace(report.source, agent=hostile))

    out = _Collect()
    polls = iter(range(3))
    print_changes(FileFollower(live, build_report=build), out, as_json=True, interval=0,
                  stop=lambda: next(polls, None) is None)
    assert "\u202e" not in out.lines[0] and "\x9b" not in out.lines[0]
    assert json.loads(out.lines[0])["source"]["agent"] == hostile


class _InterruptedMidWrite:
    """A stdout where Ctrl-C lands while a line is half written (as it did under the fuzzer)."""

    def __init__(self):
        self.text = ""

    def write(self, text: str) -> None:
        half = len(text) // 2
        self.text += text[:half]
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the signal is delivered here unless it is held back
        self.text += text[half:]

    def flush(self) -> None:
        pass


def test_ctrl_c_mid_line_still_leaves_whole_json_lines(tmp_path):
    """`--follow --json` stopped while writing a report: the line is finished, then Ctrl-C stops it."""
    live = tmp_path / "live.jsonl"
    live.write_bytes((RECORDINGS / "multi-turn" / "session.jsonl").read_bytes())
    out = _InterruptedMidWrite()
    with pytest.raises(KeyboardInterrupt):
        print_changes(FileFollower(live), out, as_json=True, interval=0)
    assert out.text.endswith("\n") and json.loads(out.text)["toolResultRetention"]["toolResultCount"] > 0


_BLOCKED_WRITER = """
import sys
from doctor.live.follow import _write_whole
print("ready", file=sys.stderr, flush=True)
try:
    _write_whole(sys.stdout, "x" * 200000 + "\\u00e9" * 50000 + "\\n")
    _write_whole(sys.stdout, "second\\n")
except KeyboardInterrupt:
    pass
"""


def test_ctrl_c_while_a_full_pipe_blocks_the_write_still_leaves_the_whole_line():
    """Ctrl-C while the line waits on a full pipe (a reader that has not read yet): a buffered text
    stream returned with the rest of the line dropped (250,000 chars came out as 131,072 bytes)."""
    child = subprocess.Popen([sys.executable, "-c", _BLOCKED_WRITER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=REPO)
    assert child.stderr.readline() == b"ready\n"
    time.sleep(0.5)  # the 300 KB line fills the 64 KB pipe and blocks
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    assert out == ("x" * 200000 + "\u00e9" * 50000 + "\n").encode()  # whole, and nothing after it


def _write_slowly(path: Path, lines: list[bytes], pause: float) -> None:
    with open(path, "ab") as writer:
        for line in lines:
            half = len(line) // 2
            writer.write(line[:half])
            writer.flush()
            time.sleep(pause)
            writer.write(line[half:])
            writer.flush()
            time.sleep(pause)


class _Collect:
    def __init__(self):
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines.extend(text.splitlines())

    def flush(self) -> None:
        pass


def _cli(*args: str, cwd: Path, env: dict, stdout) -> subprocess.Popen:
    """The CLI with stdout to a file: a full pipe would block it mid-line when the signal comes."""
    return subprocess.Popen(
        [sys.executable, "-m", "doctor", "memory", *args],
        cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True,
    )


def _qwen_home_with(tmp_path: Path, project: Path) -> tuple[Path, dict]:
    """A Qwen home holding one chats/ folder for `project`, and an environment pointing at it."""
    from doctor.sources.discovery import sanitize_cwd

    chats = tmp_path / "qwen-home" / "projects" / sanitize_cwd(str(project)) / "chats"
    chats.mkdir(parents=True)
    env = {**os.environ, "QWEN_HOME": str(tmp_path / "qwen-home"), "HOME": str(tmp_path),
           "PYTHONPATH": str(REPO)}
    return chats, env


def test_cli_follow_without_path_follows_the_newest_session_here(tmp_path):
    recording = RECORDINGS / "multi-turn" / "session.jsonl"
    project = tmp_path / "project"
    project.mkdir()
    chats, env = _qwen_home_with(tmp_path, project)
    live = chats / "0e5c4a4e-0000-4000-8000-000000000001.jsonl"
    lines = _lines(recording)
    live.write_bytes(lines[0])
    with open(tmp_path / "out.jsonl", "w") as stdout:
        process = _cli("--follow", "--json", cwd=project, env=env, stdout=stdout)
        try:
            time.sleep(1.0)
            _write_slowly(live, lines[1:], 0.01)
            time.sleep(1.5)
        finally:
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert f"following {live}" in err
    reports = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(reports) >= 2
    assert reports[-1]["toolResultRetention"] == _fresh(recording)
    one_shot = subprocess.run([sys.executable, "-m", "doctor", "memory", "--json", str(live)],
                              cwd=project, env=env, capture_output=True, text=True, check=False)
    assert json.loads(one_shot.stdout)["toolResultRetention"] == reports[-1]["toolResultRetention"]


def test_cli_follow_refuses_a_missing_file(tmp_path):
    result = subprocess.run([sys.executable, "-m", "doctor", "memory", "--follow", str(tmp_path / "nope.jsonl")],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert result.returncode == 2 and "no such file" in result.stderr and not result.stdout
