"""The scan's per-file job, phase by phase, in CPU seconds: a baseline tree against this one, same run.

`doctor scan`'s worker job (doctor.triage.job.scan_file) is the reader (`open_session` +
`report_for_session`, what `doctor memory` computes) plus the spill audit, `scan_facts`, the result rows and, with `--replay`,
the what-if inputs `doctor scan --replay` stores (doctor.triage.replay_inputs). This runs the job over a sample of the corpus's sessions (every Nth, default 5th) in
fresh `nice`d subprocesses, alternating the baseline (a git ref, exported and its C module built
in a temporary directory) and this working tree, and reports each phase's median CPU seconds
(`time.process_time`: user + system, so the page faults of a mapped file count). Each phase is
timed by wrapping the name `scan_file` calls, so both trees are timed at the same seams; the
marker search (`lines_mentioning_pointers`, inside the spill audit) is timed on its own as well.

Usage (after benchmarks/bench_scan.py built the corpus):
    python benchmarks/bench_scan_job.py [--root /tmp/doctor-bench-scan] [--every 5] [--rounds 3] [--baseline main]
                                        [--agent gemini] [--replay]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NICE_BY = 5

PHASES = r"""
import json, sys, time
from pathlib import Path
from doctor.assemble import ReportOptions
from doctor.triage import job, replay_inputs
from doctor.triage.inputs import file_key
from doctor.triage.rows import FileJob
import doctor.spill.pointers as pointers

clock = time.process_time
spent = {}

def timed(name, function):
    def wrapper(*args, **kwargs):
        start = clock()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + clock() - start
    return wrapper

def timed_iterator(name, function):
    def wrapper(*args, **kwargs):
        iterator = function(*args, **kwargs)
        while True:
            start = clock()
            try:
                item = next(iterator)
            except StopIteration:
                spent[name] = spent.get(name, 0.0) + clock() - start
                return
            spent[name] = spent.get(name, 0.0) + clock() - start
            yield item
    return wrapper

job.open_session = timed("open_session", job.open_session)
job.report_for_session = timed("report", job.report_for_session)
job._spill_findings = timed("spill audit", job._spill_findings)
job.scan_facts = timed("scan_facts", job.scan_facts)
if hasattr(job, "result_batch"):  # the rows column by column (since the scan stopped making a tuple per row)
    job.result_batch = timed("rows", job.result_batch)
else:
    job.result_rows = timed_iterator("rows", job.result_rows)
job.finish = timed("digest", job.finish)
replay_inputs.rows_for = timed("replay", replay_inputs.rows_for)
pointers.lines_mentioning_pointers = timed_iterator("(marker search)", pointers.lines_mentioning_pointers)

paths = json.load(open(sys.argv[1]))
options = ReportOptions()
# `--replay`: the job of `doctor scan --replay` (a tree older than that flag always makes the replay inputs)
asked = {"replay": True} if sys.argv[2] == "replay" and "replay" in FileJob.__dataclass_fields__ else {}
skipped = 0
start = clock()
for path in paths:
    outcome = job.scan_file(FileJob(file_key(Path(path)), path, path, None, options, **asked))
    skipped += outcome.status == "skipped"
spent["whole job"] = clock() - start
spent["(reader)"] = spent["open_session"] + spent["report"]
spent["_skipped"] = skipped
print(json.dumps(spent))
"""

# setup.py's extension, built outside the tree: the venv's setuptools may not read a newer pyproject.toml.
BUILD = """
from setuptools import Extension, setup
setup(name="baseline", ext_modules=[Extension("doctor.core._rawjson", [{source!r}])],
      script_args=["-q", "build_ext", "--build-lib", {into!r}, "--build-temp", {temp!r}])
"""

ORDER = ("open_session", "report", "(reader)", "spill audit", "(marker search)", "scan_facts", "rows", "digest", "replay",
         "whole job")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def baseline_tree(ref: str, into: Path) -> Path:
    """`ref` of this repository exported to `into`, its C module built in place (as an editable install does)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    build = BUILD.format(source=str(into / "doctor/core/_rawjson.c"), into=str(into), temp=str(into / "build"))
    subprocess.run([sys.executable, "-c", build], cwd=into.parent, check=True, capture_output=True)
    return into


def run(tree: Path, listing: Path, replay: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("DOCTOR_PURE_PYTHON", None)
    out = subprocess.run([sys.executable, "-c", PHASES, str(listing), "replay" if replay else "plain"], cwd=tree,
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=Path("/tmp/doctor-bench-scan"))
    parser.add_argument("--every", type=int, default=5, help="take every Nth session of the corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default="main", help="git ref to compare with")
    parser.add_argument("--agent", help="only this agent's sessions (qwen, claude, codex, gemini, dump)")
    parser.add_argument("--replay", action="store_true", help="the job of `doctor scan --replay` (what-if inputs too)")
    args = parser.parse_args()
    os.nice(NICE_BY)
    manifest = json.loads((args.root / "manifest.json").read_text())
    sessions = [e for e in manifest["files"] if e["kind"] == "session" and args.agent in (None, e["agent"])]
    sessions = sessions[:: args.every]
    with tempfile.TemporaryDirectory(prefix="doctor-bench-job-") as scratch:
        listing = Path(scratch) / "paths.json"
        listing.write_text(json.dumps([e["path"] for e in sessions]))
        base = Path(scratch) / "baseline"
        base.mkdir()
        baseline_tree(args.baseline, base)
        print(f"{len(sessions)} sessions, {sum(e['bytes'] for e in sessions) / 1e6:,.0f} MB; "
              f"baseline {args.baseline} vs this tree; load {load()}", flush=True)
        runs: dict[str, list[dict]] = {"baseline": [], "this": []}
        for _ in range(args.rounds):
            runs["baseline"].append(run(base, listing, args.replay))
            runs["this"].append(run(ROOT, listing, args.replay))
            print(f"  round done, load {load()}", flush=True)
    print()
    print(f"| phase (CPU s, median of {args.rounds}) | {args.baseline} | this tree | this / {args.baseline} |")
    print("|---|---:|---:|---:|")
    for phase in ORDER:
        base_s = statistics.median(r.get(phase, 0.0) for r in runs["baseline"])
        this_s = statistics.median(r.get(phase, 0.0) for r in runs["this"])
        ratio = f"{this_s / base_s:.2f}" if base_s else "-"
        print(f"| {phase} | {base_s:.2f} | {this_s:.2f} | {ratio} |")
    for name in runs:
        job = statistics.median(r["whole job"] for r in runs[name])
        reader = statistics.median(r["(reader)"] for r in runs[name])
        print(f"{name}: job / reader {job / reader:.2f}x; skipped {runs[name][0]['_skipped']}")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
