"""`doctor whatif` beside `doctor memory --json` on the same session, and a 20-value sweep beside one replay.

Goals (issue 25): one replay ≤ 1.5× `doctor memory --json` on the same session; a 20-value `--sweep`
≤ 3× one replay. Every command runs as a fresh process through the installed `doctor` script (start-up
included, as a user pays it), nice'd, the three kinds interleaved; medians of `--repeats` runs, wall and
CPU time (user + system of the child; CPU moves less with the machine's load). The load average is
printed before and after.

Sessions: the qwen-whatif `default` recording (the real Qwen Code 0.24.4 session of tests/recordings/qwen-whatif,
1.6 MB, 21 results, its spill files beside it), and a `--mb` MB recording made of the real multi-turn
recording's records re-chained with fresh uuids and realistic outputs (benchmarks/bench_qwen_reader.py).
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
KEY = "tools.truncateToolOutputThreshold"
KINDS = {
    "memory": lambda s: ["memory", s, "--json"],
    "replay": lambda s: ["whatif", s, "--json", "--set", f"{KEY}=10000"],
    "sweep20": lambda s: ["whatif", s, "--json", "--sweep", f"{KEY}=5000..100000:5000"],
}


def timed(command: list[str], env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(["nice", "-n", "10", *command], capture_output=True, env=env, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def measure(session: Path, repeats: int, env: dict) -> dict[str, tuple[float, float]]:
    runs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    for kind, args in KINDS.items():  # warm the page cache and the bytecode once
        timed([str(DOCTOR), *map(str, args(session))], env)
    for _ in range(repeats):
        for kind, args in KINDS.items():
            runs[kind].append(timed([str(DOCTOR), *map(str, args(session))], env))
    return {kind: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for kind, r in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "doctor"), quiet=1)
    scratch = Path(tempfile.mkdtemp(prefix="bench-whatif-"))
    env = {"HOME": str(scratch / "home"), "PATH": os.environ["PATH"]}
    sessions = {"qwen-whatif/default (1.6 MB, 21 results)": unpack("default", scratch)}
    big = scratch / "big" / "session.jsonl"
    big.parent.mkdir()
    records = generate(big, args.mb)
    sessions[f"multi-turn × n ({args.mb} MB, {records:,} records)"] = big
    load = os.getloadavg()[0]
    rows = []
    for name, session in sessions.items():
        got = measure(session, args.repeats, env)
        (mw, mc), (rw, rc), (sw, sc) = got["memory"], got["replay"], got["sweep20"]
        rows.append(f"| {name} | {mw:,.0f} ({mc:,.0f}) | {rw:,.0f} ({rc:,.0f}) | {sw:,.0f} ({sc:,.0f}) | "
                    f"{rw / mw:.2f} ({rc / mc:.2f}) | {sw / rw:.2f} ({sc / rc:.2f}) |")
    block = "\n".join([
        "# doctor whatif: speed",
        "",
        f"`python benchmarks/bench_whatif.py --mb {args.mb} --repeats {args.repeats}`; medians, ms wall (CPU), each a fresh "
        f"process; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after.",
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
