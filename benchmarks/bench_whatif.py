"""`doctor whatif` beside `doctor memory --json` on the same session, and a 20-value sweep beside one replay.

Goals (issue 25): one replay ≤ 1.5× `doctor memory --json` on the same session; a 20-value `--sweep`
≤ 3× one replay. Every command runs as a fresh process through the installed `doctor` script (start-up
included, as a user pays it), nice'd, the three kinds interleaved; medians of `--repeats` runs, wall and
CPU time (user + system of the child; CPU moves less with the machine's load). The load average is
printed before and after.

Sessions: the `default` what-if recording of each agent (the real clients' sessions of tests/recordings: Qwen
Code 0.24.4's qwen-whatif, 1.6 MB with its spill files beside it; Claude Code's, Gemini CLI's and Codex's, each
replayed under its own main limit), and a `--mb` MB recording made of the real multi-turn Qwen recording's
records re-chained with fresh uuids and realistic outputs (benchmarks/bench_qwen_reader.py).
The measured block of benchmarks/RESULTS-whatif.md is rewritten; what follows `<!-- notes -->` is kept.

    python benchmarks/bench_whatif.py [--mb 20] [--repeats 9]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from bench_qwen_reader import generate  # noqa: E402

from tests.whatif.recordings import unpack  # noqa: E402

RESULTS = ROOT / "benchmarks" / "RESULTS-whatif.md"
NOTES = "<!-- notes -->"
DOCTOR = Path(sys.executable).parent / "doctor"
RECORDINGS = ROOT / "tests" / "recordings"
# Per agent: its main limit, one value to replay and a 20-value sweep (its own unit: chars, or Codex's tokens).
LIMITS = {"qwen": ("tools.truncateToolOutputThreshold", "10000", "5000..100000:5000"),
          "claude": ("bashOutputMaxChars", "10000", "6400..128000:6400"),
          "gemini": ("tools.truncateToolOutputThreshold", "10000", "5000..100000:5000"),
          "codex": ("tool_output_token_limit", "1000", "500..10000:500")}
SESSION_FILES = {"claude": "home/.claude/projects/*/*.jsonl", "gemini": "home/.gemini/tmp/*/chats/*.jsonl",
                 "codex": "home/.codex/sessions/*/*/*/*.jsonl"}


def kinds(session: Path, agent: str) -> dict[str, list[str]]:
    key, value, sweep = LIMITS[agent]
    return {"memory": ["memory", str(session), "--json"],
            "replay": ["whatif", str(session), "--json", "--set", f"{key}={value}"],
            "sweep20": ["whatif", str(session), "--json", "--sweep", f"{key}={sweep}"]}


def timed(command: list[str], env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(["nice", "-n", "10", *command], capture_output=True, env=env, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def measure(session: Path, agent: str, repeats: int, env: dict) -> dict[str, tuple[float, float]]:
    commands = kinds(session, agent)
    runs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in commands}
    for args in commands.values():  # warm the page cache and the bytecode once
        timed([str(DOCTOR), *args], env)
    for _ in range(repeats):
        for kind, args in commands.items():
            runs[kind].append(timed([str(DOCTOR), *args], env))
    return {kind: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for kind, r in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "doctor"), quiet=1)
    scratch = Path(tempfile.mkdtemp(prefix="bench-whatif-"))
    env = {"HOME": str(scratch / "home"), "PATH": os.environ["PATH"]}
    sessions = {"Qwen: qwen-whatif/default (1.6 MB, 21 results)": ("qwen", unpack("default", scratch))}
    for agent in ("claude", "gemini", "codex"):
        (found,) = (RECORDINGS / agent / "whatif" / "default").glob(SESSION_FILES[agent])
        sessions[f"{agent.capitalize()}: {agent}/whatif/default ({found.stat().st_size / 1e6:.1f} MB)"] = (agent, found)
    big = scratch / "big" / "session.jsonl"
    big.parent.mkdir()
    records = generate(big, args.mb)
    sessions[f"Qwen: multi-turn × n ({args.mb} MB, {records:,} records)"] = ("qwen", big)
    load = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = []
    for name, (agent, session) in sessions.items():
        got = measure(session, agent, args.repeats, env)
        (mw, mc), (rw, rc), (sw, sc) = got["memory"], got["replay"], got["sweep20"]
        rows.append(f"| {name} | {mw:,.0f} ({mc:,.0f}) | {rw:,.0f} ({rc:,.0f}) | {sw:,.0f} ({sc:,.0f}) | "
                    f"{rw / mw:.2f} ({rc / mc:.2f}) | {sw / rw:.2f} ({sc / rc:.2f}) |")
    block = "\n".join([
        "# doctor whatif: speed",
        "",
        f"`python benchmarks/bench_whatif.py --mb {args.mb} --repeats {args.repeats}` ({started}); medians, ms wall (CPU), "
        f"each a fresh process; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after. Sweeps: 20 values of "
        f"the agent's main limit ({', '.join(f'{agent}: `{key}={sweep}`' for agent, (key, _, sweep) in LIMITS.items())}).",
        "",
        "| session | memory --json | whatif --set | whatif --sweep (20 values) | replay / memory (goal ≤ 1.5) | "
        "sweep / replay (goal ≤ 3) |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ])
    notes = RESULTS.read_text().split(NOTES, 1)[1] if RESULTS.exists() and NOTES in RESULTS.read_text() else "\n"
    RESULTS.write_text(block + NOTES + notes)
    print(block)


if __name__ == "__main__":
    main()
