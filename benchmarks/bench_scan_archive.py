"""`doctor scan` on one archive of many small sessions, against the same sessions as plain files.

Issue 22 item 7: every member re-opened and re-read its archive, so 4,000 members of a 28 KB `.tgz`
took more than 300 s (and 20,000 in a zip more than 180 s). The archive is now read once. This builds
N copies of one recorded session (tests/recordings, each under its own folder), packs them as a
`.tgz` and a `.zip`, and times the whole CLI (`doctor scan --db <fresh> --jobs J`) on the folder, the
tgz and the zip, interleaved, median of R runs each. The ratio archive ÷ folder is what reading from
an archive costs on top of reading the same files (unpacking into the private folder, one pass).

Usage:
    python benchmarks/bench_scan_archive.py [--members 4000] [--runs 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "tests" / "recordings" / "qwen" / "errors" / "session.jsonl"


def build(work: Path, members: int) -> dict[str, Path]:
    folder = work / "sessions"
    for index in range(members):
        target = folder / f"user{index:05d}" / "session.jsonl"
        target.parent.mkdir(parents=True)
        shutil.copyfile(SESSION, target)
    tgz, zipped = work / "sessions.tgz", work / "sessions.zip"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(folder, arcname="sessions")
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*.jsonl")):
            archive.write(path, path.relative_to(work).as_posix())
    return {"folder": folder, "tgz": tgz, "zip": zipped}


def scan_seconds(work: Path, target: Path, jobs: int, env: dict) -> float:
    db = work / "bench.duckdb"
    for leftover in (db, db.with_name(db.name + ".wal")):
        leftover.unlink(missing_ok=True)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "doctor.cli", "scan", "--db", str(db), "--jobs", str(jobs),
                           "-o", str(work / "report.txt"), str(target)], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"scan of {target} failed ({done.returncode}): {done.stderr.strip()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="doctor-bench-archive-"))
    try:
        env = {**os.environ, "HOME": str(work / "home")}
        for name in ("QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
            env.pop(name, None)
        targets = build(work, args.members)
        sizes = {name: path.stat().st_size for name, path in targets.items() if path.is_file()}
        print(f"{args.members:,} copies of {SESSION.relative_to(ROOT)} ({SESSION.stat().st_size:,} bytes); "
              f"tgz {sizes['tgz']:,} bytes, zip {sizes['zip']:,} bytes; --jobs {args.jobs}; load "
              f"{os.getloadavg()[0]:.1f}")
        times: dict[str, list[float]] = {name: [] for name in targets}
        for _ in range(args.runs):
            for name, target in targets.items():
                times[name].append(scan_seconds(work, target, args.jobs, env))
        folder = statistics.median(times["folder"])
        for name, values in times.items():
            median = statistics.median(values)
            print(f"{name:>6}: median {median:6.2f} s  ({', '.join(f'{v:.2f}' for v in values)})  "
                  f"÷ folder {median / folder:.2f}×")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
