"""A fleet sweep of 20 values from the triage database, and what storing the replay inputs costs the scan.

Goal (issue 25): `doctor scan --db DB --sweep KEY=…` (20 values) over a scanned ≥ 2 GB corpus answers in
≤ 2 s from the database. The corpus is benchmarks/scan_corpus.py's (every agent, grown from the real
recordings); it is scanned once, then each sweep runs as a fresh process through the installed `doctor`
script (start-up included), medians of `--repeats`. The scan's added cost is measured in this process
on a sample of the corpus's session files: the scan job (doctor/triage/job.py) with and without the
replay rows (CPU time, medians of 3 per file, summed). The table sizes give the scaling: the sweep's
work is one pass over `replay_samples` per agent and key, times the points.

    python benchmarks/bench_whatif_fleet.py [--sessions 200] [--gb 0.2] [--repeats 5]
"""

from __future__ import annotations

import argparse
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
import scan_corpus  # noqa: E402

DOCTOR = Path(sys.executable).parent / "doctor"
SWEEPS = {"qwen/gemini threshold": "tools.truncateToolOutputThreshold=5000..100000:5000",
          "claude bashOutputMaxChars": "bashOutputMaxChars=4000..128000:6200",
          "codex tool_output_token_limit": "tool_output_token_limit=500..10000:500"}


def run(args: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child and its threads) of one fresh `doctor` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(DOCTOR), *args], capture_output=True, env=env)
    if done.returncode not in (0, 3):  # 3: the corpus's corrupt files were skipped, as they should be
        raise SystemExit(f"doctor {' '.join(args)}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - start, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def scan_cost(files: list[Path]) -> tuple[float, float]:
    """CPU seconds of the scan job on `files` without and with the replay rows (medians of 3 per file)."""
    from doctor.triage import job as scan_job
    from doctor.triage.rows import FileJob

    totals = [0.0, 0.0]
    for path in files:
        for with_rows in (False, True):
            times = []
            for _ in range(3):
                start = time.process_time()
                scan_job.scan_file(FileJob("k", str(path), str(path), replay=with_rows))
                times.append(time.process_time() - start)
            totals[with_rows] += statistics.median(times)
    return totals[0], totals[1]


TABLES = ("sessions", "results", "replay_sessions", "replay_keys", "replay_results", "replay_samples")


def replicated(db: Path, times: int, scratch: Path) -> Path:
    """A copy of `db` holding each session `times` times, each copy under its own session key."""
    import shutil

    import duckdb

    copy = scratch / f"replicated-{times}.duckdb"
    shutil.copyfile(db, copy)
    with duckdb.connect(str(copy)) as connection:
        for n in range(1, times):
            for table in TABLES:
                connection.execute(f"INSERT INTO {table} SELECT * REPLACE (session_key || '#{n}' AS session_key) "
                                   f"FROM {table} WHERE session_key NOT LIKE '%#%'")
    return copy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--gb", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "doctor-fleet-corpus")
    parser.add_argument("--sample", type=int, default=40, help="session files timed for the scan's added cost")
    parser.add_argument("--db", type=Path, help="a database this corpus was already scanned into (no scan)")
    parser.add_argument("--replicate", type=int, default=1,
                        help="answer from a copy of the database with every session N times (new keys): the rows a "
                             "corpus N times as large gives, without scanning it")
    args = parser.parse_args()
    total = int(args.gb * 1e9)
    manifest = scan_corpus.existing(args.root, args.sessions, total) or scan_corpus.build(args.root, args.sessions, total)
    scratch = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    env = {"HOME": str(scratch / "home"), "PATH": os.environ["PATH"]}
    db = args.db or scratch / "fleet.duckdb"
    load = os.getloadavg()[0]
    scan_seconds = None if args.db else run(["scan", "--db", str(db), "--replay", "-o", str(scratch / "report.txt"),
                                            str(args.root / "corpus")], env)
    import duckdb

    if args.replicate > 1:
        db = replicated(db, args.replicate, scratch)
    with duckdb.connect(str(db), read_only=True) as connection:
        counts = {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                  for table in ("sessions", "results", "replay_sessions", "replay_results", "replay_samples")}
    sweeps = {}
    for name, spec in SWEEPS.items():
        run(["scan", "--db", str(db), "--sweep", spec, "--json"], env)  # warm the page cache
        sweeps[name] = _medians([run(["scan", "--db", str(db), "--sweep", spec, "--json"], env)
                                 for _ in range(args.repeats)])
    baseline = _medians([run(["scan", "--db", str(db), "--json"], env) for _ in range(args.repeats)])
    files = [Path(e["path"]) for e in manifest["files"] if e["kind"] == "session"][:args.sample]
    without, with_rows = scan_cost(files)
    scanned = "scanned before" if scan_seconds is None else f"scan (all cores, wall) {scan_seconds[0]:.1f} s"
    if args.replicate > 1:
        scanned += f"; answered from a copy with every session {args.replicate} times"
    lines = [f"corpus: {manifest['bytes'] / 1e9:.2f} GB, {args.sessions} sessions; {scanned}; "
             f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after",
             "rows: " + ", ".join(f"{table} {count:,}" for table, count in counts.items()),
             f"`doctor scan --db DB --json` (the summary answers, for scale): {baseline[0]:.2f} s wall, "
             f"{baseline[1]:.2f} s CPU"]
    lines += [f"sweep of 20 values, {name}: {wall:.2f} s wall, {cpu:.2f} s CPU (median of {args.repeats}, fresh "
              "process)" for name, (wall, cpu) in sweeps.items()]
    lines.append(f"scan job CPU on {len(files)} session files: {without:.2f} s without the replay rows, "
                 f"{with_rows:.2f} s with ({with_rows / without:.2f}x)")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
