"""`doctor scan` throughput against the single reader, in interleaved rounds, with the machine's own ceiling.

On this kind of machine (a VM on shared hosts) the same single-reader run over the same files took 39.6 s and
51.0 s ten minutes apart, and each process's CPU seconds for the same work moved by a third: one scan set against
one or two reader runs (benchmarks/bench_scan.py) gives a ratio that is mostly noise. So this runs rounds of

1. the single reader over every session file (bench_scan.READER: `open_session` + `report_for_session`);
2. two such readers at once, each on half the files: the most any two-process pool can get from this machine
   with doctor's reader (its "ceiling": parallel halves ÷ the single reader, ideally 2);
3. `doctor scan` of the whole corpus into a new database (the local pool on every core);

and reports each round's ratios against the reader of the same round, then the medians. The scan's goal (issue
24) is >= 0.8 × cores × the single reader's throughput.

Usage (after benchmarks/bench_scan.py built the corpus):
    python benchmarks/bench_scan_rounds.py [--root /tmp/doctor-bench-scan] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_scan  # noqa: E402


def parallel_halves(listing: Path, env: dict) -> float:
    """Wall seconds for two readers at once, each on every other session file."""
    paths = json.loads(listing.read_text())
    halves = []
    for start in (0, 1):
        half = listing.with_name(f"half{start}.json")
        half.write_text(json.dumps(paths[start::2]))
        halves.append(half)
    began = time.perf_counter()
    running = [subprocess.Popen([sys.executable, "-c", bench_scan.READER, str(half)], cwd=bench_scan.ROOT, env=env,
                                stdout=subprocess.DEVNULL) for half in halves]
    for process in running:
        process.wait()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=Path("/tmp/doctor-bench-scan"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "HOME": str(args.root / "home")}
    env.pop("QWEN_HOME", None)
    (args.root / "home").mkdir(parents=True, exist_ok=True)
    listing = args.root / "sessions.json"
    corpus = args.root / "corpus"
    manifest = json.loads((args.root / "manifest.json").read_text())
    cores = len(os.sched_getaffinity(0))
    scans, ceilings = [], []
    print(f"corpus {manifest['bytes'] / 1e6:,.0f} MB ({len(manifest['files'])} files), {cores} cores", flush=True)
    for round_number in range(1, args.rounds + 1):
        single = bench_scan.python(bench_scan.READER, str(listing), env=env)
        reader_mbs = single["bytes"] / 1e6 / single["seconds"]
        halves = parallel_halves(listing, env)
        db = args.root / "rounds.duckdb"
        for stale in args.root.glob("rounds.duckdb*"):
            stale.unlink()
        scan = bench_scan.timed(bench_scan.scan_command(db, corpus), env)
        scan_ratio = manifest["bytes"] / 1e6 / scan["seconds"] / (cores * reader_mbs)
        ceiling = single["seconds"] / halves / cores
        scans.append(scan_ratio)
        ceilings.append(ceiling)
        print(f"round {round_number}: reader {single['seconds']:.1f} s ({single['cpu_seconds']:.1f} s CPU); two readers "
              f"on halves {halves:.1f} s = {ceiling:.2f} x cores x reader; scan {scan['seconds']:.1f} s = "
              f"{scan_ratio:.2f} x cores x reader (load {bench_scan.load()})", flush=True)
    print(f"medians of {args.rounds}: scan {statistics.median(scans):.2f} x cores x reader (goal >= 0.8); "
          f"the machine's two-process ceiling {statistics.median(ceilings):.2f}; the scan reaches "
          f"{statistics.median(scans) / statistics.median(ceilings):.0%} of it", flush=True)


if __name__ == "__main__":
    main()
