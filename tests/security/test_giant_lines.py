"""Giant lines (issue 22, item 13): whatever a file holds, memory stays bounded and the rest is read.

A crash can leave a run of NUL bytes after a valid session (0 bytes on disk when sparse: here
`truncate`), and a stranger's file can be one line of gigabytes. On main a 512 MiB run took
`doctor memory` and the status line past 1 GB (3.4 GB for a dump), 3 GiB ended in MemoryError,
and 4 GiB given as `transcript_path` crashed orjson. Each case runs the real command as a
subprocess (`doctor memory --json FILE`, the status line with the agent's JSON on stdin,
`doctor spill show`) whose peak resident set (its own VmHWM, read at exit) is checked, with the
figures: the valid session before the run is read as if the run were not there, and the line
over the cap (jsonl.LINE_CAP, docs/security.md) is an input issue naming the file and line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from doctor.sources.jsonl import LINE_CAP

from .peak_support import doctor_with_peak

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "recordings"
MIB = 1 << 20
GIB = 1 << 30
# What a bounded run may take: doctor itself (~40 MB here) and room; main took 1-3.4 GB on these files.
BOUND = 200 * MIB
# The exit code of a report whose input had a part it could not read.
PARTIAL_INPUT = 3

SESSIONS = {  # a real recording of each reader's format
    "qwen": RECORDINGS / "qwen/multi-turn/session.jsonl",
    "claude": next((RECORDINGS / "claude/big-outputs/home/.claude/projects").glob("*/*.jsonl")),
    "codex": next((RECORDINGS / "codex/big-outputs/home/.codex/sessions").glob("*/*/*/*.jsonl")),
    "gemini": next((RECORDINGS / "gemini/big-outputs/home/.gemini/tmp/w/chats").glob("*.jsonl")),
    "dump": RECORDINGS / "dumps/openai-chat.messages.jsonl",
}
DOCUMENTS = {  # one JSON document per file: the document itself is what the cap applies to
    "gemini": ROOT / "tests/fixtures/public/gemini-cli/yoavf-gemini-cli-pomodoro-timer.json",
    "dump": RECORDINGS / "dumps/anthropic.request.json",
}


def _with_tail(source: Path, target: Path, tail: int) -> Path:
    """`source` copied with `tail` NUL bytes after it, as a sparse file."""
    target.write_bytes(source.read_bytes())
    with open(target, "r+b") as handle:
        handle.truncate(target.stat().st_size + tail)
    return target


def _report(tmp_path: Path, path: Path, agent: str) -> tuple[dict, int, int]:
    done, peak = doctor_with_peak(tmp_path, "memory", "--json", "--agent", agent, str(path))
    return json.loads(done.stdout), done.returncode, peak


@pytest.mark.parametrize("agent", sorted(SESSIONS))
def test_a_nul_run_past_the_cap_after_a_session_is_measured_not_read(tmp_path, agent):
    source = SESSIONS[agent]
    clean, clean_code, _ = _report(tmp_path, source, agent)
    path = _with_tail(source, tmp_path / f"crashed{source.suffix}", 512 * MIB)
    report, code, peak = _report(tmp_path, path, agent)
    assert peak < BOUND, f"peak RSS {peak / MIB:,.0f} MiB"
    assert code == PARTIAL_INPUT and clean_code in (0, PARTIAL_INPUT)
    assert report["toolResultRetention"] == clean["toolResultRetention"]
    data = source.read_bytes()
    line, start = data.count(b"\n") + 1, data.rfind(b"\n") + 1  # the run is the line after the last newline
    [over] = [issue for issue in report["issues"] if "longer than doctor decodes" in issue["message"]]
    assert (over["line"], over["severity"]) == (line, "warning") and Path(over["path"]).name == path.name
    assert f"line of {path.stat().st_size - start:,} bytes" in over["message"]


@pytest.mark.parametrize("agent", sorted(DOCUMENTS))
def test_a_one_document_file_past_the_cap_is_refused_in_one_line(tmp_path, agent):
    path = _with_tail(DOCUMENTS[agent], tmp_path / f"crashed{DOCUMENTS[agent].suffix}", 512 * MIB)
    done, peak = doctor_with_peak(tmp_path, "memory", "--json", "--agent", agent, str(path))
    assert peak < BOUND, f"peak RSS {peak / MIB:,.0f} MiB"
    message = done.stderr.decode()
    assert done.returncode == 2 and message.count("\n") == 1, message
    assert str(path) in message and f"longer than doctor decodes ({LINE_CAP:,} bytes)" in message


def test_a_nul_run_under_the_cap_is_an_invalid_line_without_copies(tmp_path):
    """64 MiB of NUL bytes is a line doctor may decode: it is judged invalid from its first byte, not
    copied three times over to fail each decoder (main peaked at ~3x the run)."""
    source = SESSIONS["qwen"]
    clean, _, _ = _report(tmp_path, source, "qwen")
    report, code, peak = _report(tmp_path, _with_tail(source, tmp_path / "crashed.jsonl", 64 * MIB), "qwen")
    assert peak < 64 * MIB + BOUND, f"peak RSS {peak / MIB:,.0f} MiB"
    assert report["toolResultRetention"] == clean["toolResultRetention"]
    assert any("invalid JSON line (67,108,864 bytes)" in issue["message"] or "incomplete last record" in issue["message"]
               for issue in report["issues"])


@pytest.mark.slow
@pytest.mark.ci
def test_three_gib_of_nul_bytes_after_a_session_end_in_no_memory_error(tmp_path):
    source = SESSIONS["claude"]
    clean, _, _ = _report(tmp_path, source, "claude")
    report, code, peak = _report(tmp_path, _with_tail(source, tmp_path / "crashed.jsonl", 3 * GIB), "claude")
    assert peak < BOUND and code == PARTIAL_INPUT, f"peak RSS {peak / MIB:,.0f} MiB, exit {code}"
    assert report["toolResultRetention"] == clean["toolResultRetention"]


def _status_line(tmp_path: Path, agent: str, transcript: Path) -> tuple[str, int]:
    payload = {"session_id": "s", "transcript_path": str(transcript), "cwd": str(tmp_path)}
    done, peak = doctor_with_peak(tmp_path, "statusline", agent, stdin=json.dumps(payload).encode())
    assert done.returncode == 0 and done.stdout.decode().count("\n") == 1
    return done.stdout.decode(), peak


@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_the_status_line_reads_a_session_with_a_nul_run_in_bounded_memory(tmp_path, agent):
    source = SESSIONS[agent]
    expected, _ = _status_line(tmp_path, agent, _with_tail(source, tmp_path / "clean.jsonl", 0))
    path = _with_tail(source, tmp_path / "crashed.jsonl", 512 * MIB)
    for turn in range(2):  # the first turn reads and stores the index, the second resumes it
        line, peak = _status_line(tmp_path, agent, path)
        assert peak < BOUND, f"turn {turn}: peak RSS {peak / MIB:,.0f} MiB"
        assert line == expected


@pytest.mark.slow
@pytest.mark.ci
@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_four_gib_as_transcript_path_is_one_line_not_a_crash(tmp_path, agent):
    """A 4 GiB file of NUL bytes given as the transcript (main: orjson segfaulted, the agent's status
    line went blank)."""
    path = tmp_path / "four.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(4 * GIB)
    line, peak = _status_line(tmp_path, agent, path)
    assert peak < BOUND, f"peak RSS {peak / MIB:,.0f} MiB"
    assert line.startswith("doctor: ")


def test_spill_show_pages_a_giant_line_in_bounded_memory(tmp_path):
    """The pager engine already read a long line in windows; it stays so past the cap."""
    path = tmp_path / "spill.txt"
    path.write_bytes(b"first line of output\n" * 10_000)  # text as far as the binary sniff looks
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size + 1 * GIB)
        handle.seek(0, os.SEEK_END)
        handle.write(b"last words\n")
    done, peak = doctor_with_peak(tmp_path, "spill", "show", "--allow-outside", str(path), "--offset", "9999", "--limit", "2")
    assert done.returncode == 0 and peak < BOUND, f"peak RSS {peak / MIB:,.0f} MiB"
    assert done.stdout.startswith(b"first line of output\n\\x00")
    done, peak = doctor_with_peak(tmp_path, "spill", "show", "--allow-outside", str(path), "--grep", "last words")
    assert done.returncode == 0 and peak < BOUND and b"last words" in done.stdout
