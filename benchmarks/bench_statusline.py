"""`doctor statusline claude|qwen` after one more turn on a 50 MB transcript, and `doctor memory --json` on a
small session, each beside bare interpreter start-up (`python -c pass`) in the same run.

The Claude transcript is synthesised as in bench_claude_reader.py (copies of the real Claude Code 2.1.332
big-outputs recording, fresh ids per copy, tool outputs replaced by realistic text of the same length); the
Qwen one as in bench_qwen_reader.py (copies of the real Qwen Code 0.24.4 multi-turn recording, re-chained
with fresh uuids, realistic outputs), placed where Qwen keeps it so that doctor finds it from Qwen's own
status-line stdin (`session_id`, `workspace.current_dir`). Each status line runs once untimed (the index
is then warm); each repeat appends one more copy of each recording (one more session's worth of turns:
~190 KB and 5 tool results for Claude, ~360 KB and 21 for Qwen) untimed, then times both status lines.
The small session is tests/recordings/qwen/oversized-alarm. The package's bytecode is compiled first, as
an installed package's is. Every command runs as a fresh process through the installed `doctor` script,
nice'd, the four kinds interleaved; medians are reported with the load average before and after.
With `--baseline TREE` (a checkout of another commit, e.g. `git worktree add /tmp/main main`, with its C
module built) both status lines of that tree also run, as the `doctor` script does with PYTHONPATH=TREE and a cache
folder of their own, interleaved with the others, and the ratio of the times over start-up is reported.
The measured block of benchmarks/RESULTS-statusline.md is rewritten; what follows its
`<!-- notes -->` line is kept. Usage:
    python benchmarks/bench_statusline.py [--mb 50] [--repeats 15] [--baseline TREE]
"""

from __future__ import annotations

import argparse
import compileall
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
from bench_claude_reader import SOURCE as CLAUDE_SOURCE  # noqa: E402
from bench_claude_reader import copies as claude_copies  # noqa: E402
from bench_claude_reader import synthesise  # noqa: E402
from bench_qwen_reader import SOURCE as QWEN_SOURCE  # noqa: E402
from bench_qwen_reader import copies as qwen_copies  # noqa: E402
from bench_qwen_reader import generate  # noqa: E402

from doctor.sources.discovery import sanitize_cwd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS-statusline.md"
NOTES = "<!-- notes -->"
SMALL = ROOT / "tests/recordings/qwen/oversized-alarm/session.jsonl"
DOCTOR = Path(sys.executable).parent / "doctor"
GOAL_STATUSLINE, GOAL_MEMORY = 100, 150  # ms over start-up
# What the installed `doctor` script runs, for a tree given by PYTHONPATH.
SCRIPT = "import sys; from doctor.cli import main; sys.exit(main())"


def timed(command: list[str], env: dict, stdin: bytes = b"") -> tuple[float, float, bytes]:
    """(wall ms, CPU ms: user + system of the child, stdout). CPU time moves less with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(["nice", "-n", "10", *command], input=stdin, capture_output=True, env=env, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu, done.stdout


def baseline_lines(tree: Path, wall: dict, cpu: dict, lines: dict, cold: dict) -> list[str]:
    """The baseline tree's status lines beside this one's: times over start-up and their ratio."""
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or str(tree)
    out = ["", f"Baseline: the same status lines of {commit} (its tree first on PYTHONPATH, its own cache folder), interleaved.", "",
           "| status line | baseline wall over start-up | this | baseline CPU over start-up | this | baseline / this (wall) |",
           "|---|---:|---:|---:|---:|---:|"]
    for agent in ("claude", "qwen"):
        base, this = f"base-{agent}", agent
        assert lines[base] == lines[this], (lines[base], lines[this])
        over = lambda table, kind: table[kind] - table["bare"]  # noqa: E731
        out.append(f"| {agent} | {over(wall, base):.0f} | {over(wall, this):.0f} | {over(cpu, base):.0f} | "
                   f"{over(cpu, this):.0f} | **{over(wall, base) / over(wall, this):.2f}×** |")
    out.append(f"Cold (no index), wall ms: baseline Claude {cold['base-claude']:.0f}, Qwen {cold['base-qwen']:.0f}; "
               f"this Claude {cold['claude']:.0f}, Qwen {cold['qwen']:.0f}.")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="a checkout of the commit to compare with")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "doctor", quiet=1)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache"), "HOME": str(home)}
        env.pop("QWEN_CODE_PROJECT_DIR", None)
        env.pop("QWEN_CODE_SESSION_ID", None)
        claude = Path(scratch) / "claude.jsonl"
        qwen = home / ".qwen" / "projects" / sanitize_cwd(project) / "chats" / "bench.jsonl"
        qwen.parent.mkdir(parents=True)
        claude_chunks, qwen_chunks = claude_copies(), qwen_copies()
        claude_count = synthesise(claude, args.mb, claude_chunks)
        qwen_records = generate(qwen, args.mb, chunks=qwen_chunks)
        commands = {
            "bare": ([sys.executable, "-c", "pass"], b""),
            "claude": ([str(DOCTOR), "statusline", "claude"],
                       json.dumps({"session_id": "bench", "transcript_path": str(claude), "cwd": str(project)}).encode()),
            "qwen": ([str(DOCTOR), "statusline", "qwen"],
                     json.dumps({"session_id": "bench", "workspace": {"current_dir": str(project)}}).encode()),
            "memory": ([str(DOCTOR), "memory", "--json", str(SMALL)], b""),
        }
        envs = {kind: env for kind in commands}
        if args.baseline:
            compileall.compile_dir(args.baseline / "doctor", quiet=1)
            base_env = {**env, "PYTHONPATH": str(args.baseline), "XDG_CACHE_HOME": str(Path(scratch) / "base-cache")}
            for agent in ("claude", "qwen"):
                commands[f"base-{agent}"] = ([sys.executable, "-P", "-c", SCRIPT, *commands[agent][0][1:]], commands[agent][1])
                envs[f"base-{agent}"] = base_env
        kinds = tuple(commands)
        cold = {kind: timed(commands[kind][0], envs[kind], commands[kind][1])[0] for kind in kinds if "claude" in kind
                or "qwen" in kind}
        sizes = {"claude": claude.stat().st_size, "qwen": qwen.stat().st_size}
        times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
        lines: dict[str, bytes] = {}
        for _ in range(args.repeats):
            with open(claude, "a", encoding="utf-8") as handle:
                handle.write(next(claude_chunks))
            with open(qwen, "ab") as handle:
                handle.write(next(qwen_chunks)[0])
            for kind in kinds:
                command, stdin = commands[kind]
                wall, cpu, lines[kind] = timed(command, envs[kind], stdin)
                times[kind].append((wall, cpu))
        grown = {"claude": claude.stat().st_size, "qwen": qwen.stat().st_size}
    load_after = os.getloadavg()
    wall = {kind: statistics.median(t[0] for t in runs) for kind, runs in times.items()}
    cpu = {kind: statistics.median(t[1] for t in runs) for kind, runs in times.items()}
    verdict = lambda over, goal: f"**{over:.0f} ms** (goal ≤ {goal} ms: {'met' if over <= goal else 'missed'})"  # noqa: E731
    raw = lambda kind, i: ", ".join(f"{t[i]:.0f}" for t in times[kind])  # noqa: E731
    row = lambda kind, label: (f"| {label} | {wall[kind]:.0f} | {wall[kind] - wall['bare']:.0f} | {cpu[kind]:.0f} | "  # noqa: E731
                               f"{cpu[kind] - cpu['bare']:.0f} |")
    measured = "\n".join([
        "# Status line and small-session report: time over interpreter start-up",
        "",
        f"`python benchmarks/bench_statusline.py --mb {args.mb} --repeats {args.repeats}"
        f"{f' --baseline {args.baseline}' if args.baseline else ''}` "
        f"({time.strftime('%Y-%m-%d %H:%M')}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs shared with other "
        f"sessions; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after).",
        "",
        f"- Claude transcript: {claude_count} copies of `{CLAUDE_SOURCE.name}` (tests/recordings/claude/big-outputs), "
        f"{sizes['claude']:,} bytes, growing to {grown['claude']:,} bytes (one more copy before each timed run). "
        f"Cold status line (no index yet, whole file read once): {cold['claude']:.0f} ms. "
        f"Last line: `{lines['claude'].decode().strip()}`",
        f"- Qwen transcript: {qwen_records:,} records, copies of tests/recordings/qwen/{QWEN_SOURCE.parent.name}, "
        f"{sizes['qwen']:,} bytes, growing to {grown['qwen']:,} bytes. Cold status line: {cold['qwen']:.0f} ms. "
        f"Last line: `{lines['qwen'].decode().strip()}`",
        "",
        "Each run is a fresh `nice -n 10` process through the installed `doctor` script; medians of "
        f"{args.repeats}, the four commands interleaved. CPU = user + system time of the process.",
        "",
        "| command | wall (ms) | over start-up | CPU (ms) | over start-up |",
        "|---|---:|---:|---:|---:|",
        f"| `python -c pass` | {wall['bare']:.0f} | — | {cpu['bare']:.0f} | — |",
        row("claude", f"`doctor statusline claude`, {args.mb} MB transcript, one more turn, index warm"),
        row("qwen", f"`doctor statusline qwen`, {args.mb} MB transcript, one more turn, index warm"),
        row("memory", f"`doctor memory --json` on {SMALL.parent.name} ({SMALL.stat().st_size:,} bytes)"),
        "",
        f"- Status line, Claude, wall over start-up: {verdict(wall['claude'] - wall['bare'], GOAL_STATUSLINE)}; "
        f"CPU over start-up {cpu['claude'] - cpu['bare']:.0f} ms.",
        f"- Status line, Qwen, wall over start-up: {verdict(wall['qwen'] - wall['bare'], GOAL_STATUSLINE)}; "
        f"CPU over start-up {cpu['qwen'] - cpu['bare']:.0f} ms.",
        f"- `doctor memory --json`, small session, wall over start-up: {verdict(wall['memory'] - wall['bare'], GOAL_MEMORY)}; "
        f"CPU over start-up {cpu['memory'] - cpu['bare']:.0f} ms.",
        *(baseline_lines(args.baseline, wall, cpu, lines, cold) if args.baseline else ()),
        "",
        f"Raw wall (ms): start-up {raw('bare', 0)}; Claude {raw('claude', 0)}; Qwen {raw('qwen', 0)}; "
        f"memory --json {raw('memory', 0)}.",
        f"Raw CPU (ms): start-up {raw('bare', 1)}; Claude {raw('claude', 1)}; Qwen {raw('qwen', 1)}; "
        f"memory --json {raw('memory', 1)}.",
        "",
    ])
    previous = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    notes = previous[previous.index(NOTES):] if NOTES in previous else f"{NOTES}\n"
    RESULTS.write_text(measured + "\n" + notes, encoding="utf-8")
    print(measured)


if __name__ == "__main__":
    main()
