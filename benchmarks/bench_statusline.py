"""`doctor statusline` after one more turn on a 50 MB transcript, and `doctor memory --json` on a small
session, each beside bare interpreter start-up (`python -c pass`) in the same run.

The transcript is synthesised as in bench_claude_reader.py (copies of the real Claude Code 2.1.332
big-outputs recording, fresh ids per copy, tool outputs replaced by realistic text of the same length). The status line runs once untimed (the index is then
warm); each repeat appends one more copy of the recording (one more session's worth of turns:
~190 KB, 5 tool results) untimed, then times `doctor statusline claude` with Claude's stdin
payload. The small session is tests/recordings/qwen/oversized-alarm. Every command runs as a fresh
process through the installed `doctor` script, nice'd, the three kinds interleaved; medians are
reported with the load average before and after. Usage:
    python benchmarks/bench_statusline.py [--mb 50] [--repeats 15]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_claude_reader import SOURCE, copies, synthesise  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS-statusline.md"
SMALL = ROOT / "tests/recordings/qwen/oversized-alarm/session.jsonl"
DOCTOR = Path(sys.executable).parent / "doctor"
GOAL_STATUSLINE, GOAL_MEMORY = 100, 150  # ms over start-up


def timed(command: list[str], env: dict, stdin: bytes = b"") -> tuple[float, float, bytes]:
    """(wall ms, CPU ms: user + system of the child, stdout). CPU time moves less with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(["nice", "-n", "10", *command], input=stdin, capture_output=True, env=env, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache"), "HOME": str(Path(scratch) / "home")}
        transcript = Path(scratch) / "session.jsonl"
        chunks = copies()
        count = synthesise(transcript, args.mb, chunks)
        payload = json.dumps({"session_id": "bench", "transcript_path": str(transcript), "cwd": scratch}).encode()
        statusline = [str(DOCTOR), "statusline", "claude"]
        cold = timed(statusline, env, payload)[0]  # builds the index
        start_size = transcript.stat().st_size
        bare = [sys.executable, "-c", "pass"]
        memory = [str(DOCTOR), "memory", "--json", str(SMALL)]
        times: dict[str, list[tuple[float, float]]] = {"bare": [], "line": [], "memory": []}
        line = b""
        for repeat in range(args.repeats):
            with open(transcript, "a", encoding="utf-8") as handle:
                handle.write(next(chunks))
            times["bare"].append(timed(bare, env)[:2])
            wall, cpu, line = timed(statusline, env, payload)
            times["line"].append((wall, cpu))
            times["memory"].append(timed(memory, env)[:2])
        end_size = transcript.stat().st_size
    load_after = os.getloadavg()
    wall = {kind: statistics.median(t[0] for t in runs) for kind, runs in times.items()}
    cpu = {kind: statistics.median(t[1] for t in runs) for kind, runs in times.items()}
    verdict = lambda over, goal: f"**{over:.0f} ms** (goal ≤ {goal} ms: {'met' if over <= goal else 'missed'})"  # noqa: E731
    raw = lambda kind, i: ", ".join(f"{t[i]:.0f}" for t in times[kind])  # noqa: E731
    report = "\n".join([
        "# Status line and small-session report: time over interpreter start-up",
        "",
        f"`python benchmarks/bench_statusline.py --mb {args.mb} --repeats {args.repeats}` "
        f"({time.strftime('%Y-%m-%d %H:%M')}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs shared with other "
        f"sessions; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after).",
        "",
        f"Transcript: {count} copies of `{SOURCE.name}` (tests/recordings/claude/big-outputs), "
        f"{start_size:,} bytes, growing to {end_size:,} bytes (one more copy before each timed run).",
        f"Last line printed: `{line.decode().strip()}`",
        f"Cold status line (no index yet, whole file read once): {cold:.0f} ms.",
        "",
        "Each run is a fresh `nice -n 10` process through the installed `doctor` script; medians of "
        f"{args.repeats}, the three commands interleaved. CPU = user + system time of the process.",
        "",
        "| command | wall (ms) | over start-up | CPU (ms) | over start-up |",
        "|---|---:|---:|---:|---:|",
        f"| `python -c pass` | {wall['bare']:.0f} | — | {cpu['bare']:.0f} | — |",
        f"| `doctor statusline claude`, {args.mb} MB transcript, one more turn, index warm | {wall['line']:.0f} | "
        f"{wall['line'] - wall['bare']:.0f} | {cpu['line']:.0f} | {cpu['line'] - cpu['bare']:.0f} |",
        f"| `doctor memory --json` on {SMALL.parent.name} ({SMALL.stat().st_size:,} bytes) | {wall['memory']:.0f} | "
        f"{wall['memory'] - wall['bare']:.0f} | {cpu['memory']:.0f} | {cpu['memory'] - cpu['bare']:.0f} |",
        "",
        f"- Status line, wall over start-up: {verdict(wall['line'] - wall['bare'], GOAL_STATUSLINE)}; "
        f"CPU over start-up {cpu['line'] - cpu['bare']:.0f} ms.",
        f"- `doctor memory --json`, small session, wall over start-up: {verdict(wall['memory'] - wall['bare'], GOAL_MEMORY)}; "
        f"CPU over start-up {cpu['memory'] - cpu['bare']:.0f} ms.",
        "",
        f"Raw wall (ms): start-up {raw('bare', 0)}; status line {raw('line', 0)}; memory --json {raw('memory', 0)}.",
        f"Raw CPU (ms): start-up {raw('bare', 1)}; status line {raw('line', 1)}; memory --json {raw('memory', 1)}.",
        "",
    ])
    RESULTS.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
