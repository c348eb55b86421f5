"""What writing a file costs `doctor scan`'s main process, beside what reading the file costs.

The scan's main process commits finished files in groups (doctor/triage/store.py `write_group`: one
transaction, one statement per table for the whole group). This takes the real outcomes of a sample
of corpus sessions (every Nth; `scan_file`, as a worker makes them), then in one process: reads each
file as the single-reader baseline of bench_scan.py does (`open_session` + `report_for_session`),
and writes the outcomes into a fresh database through `Store.write_group`, in groups of --group
files (1: a transaction per file, as before group commits; default: the scan's GROUP_FILES). CPU
time (`time.process_time`), totals and per file. The ratio writer ÷ reader bounds the scan's
throughput on a machine whose cores run the workers: even with a job that cost exactly the reader,
the scan reads at most 1 ÷ (1 + writer ÷ reader) × cores × the single reader's throughput.

Usage (after benchmarks/bench_scan.py built the corpus):
    python benchmarks/bench_scan_writer.py [--root /tmp/doctor-bench-scan] [--every 5] [--group 64]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from doctor.assemble import ReportOptions, report_for_session
from doctor.sources.registry import open_session
from doctor.triage.fingerprint import fingerprint
from doctor.triage.inputs import file_key
from doctor.triage.job import scan_file
from doctor.triage.rows import OK, FileJob
from doctor.triage.runner import GROUP_FILES
from doctor.triage.store import FileWrite, Store

clock = time.process_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/doctor-bench-scan"))
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--group", type=int, default=GROUP_FILES, help="files per transaction")
    args = parser.parse_args()
    files = sorted(p for p in (args.root / "corpus").rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
    files = files[::args.every]
    options = ReportOptions()

    reading = 0.0
    outcomes = []
    for path in files:
        outcome = scan_file(FileJob(file_key(path), str(path), str(path), options=options, size=path.stat().st_size))
        if outcome.status != OK or outcome.session.get("source") != "session":
            continue
        start = clock()
        report_for_session(open_session(path), options)
        reading += clock() - start
        outcomes.append((outcome, fingerprint(path)))

    with tempfile.TemporaryDirectory(prefix="bench-writer-") as tmp:
        store = Store(Path(tmp) / "triage.duckdb")
        scan_id = store.begin_scan("local")
        writes = [FileWrite(outcome, fp, fresh=True) for outcome, fp in outcomes]
        start = clock()
        for first in range(0, len(writes), args.group):
            store.write_group(writes[first:first + args.group], scan_id)
        writing = clock() - start
        store.close()

    n = len(outcomes)
    rows = sum(len(outcome.results) for outcome, _ in outcomes)
    print(f"{n} sessions (every {args.every}th file of {args.root / 'corpus'}), {rows:,} result rows; "
          f"Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f}")
    print(f"reader (open_session + report_for_session): {reading:.2f} s CPU, {reading / n * 1000:.2f} ms a file")
    print(f"writer (Store.write_group, {args.group} files a transaction): {writing:.2f} s CPU, "
          f"{writing / n * 1000:.2f} ms a file")
    ratio = writing / reading
    print(f"writer / reader: {ratio:.2f}; scan throughput bound with a job costing exactly the reader: "
          f"{1 / (1 + ratio):.2f} x cores x single reader")


if __name__ == "__main__":
    main()
