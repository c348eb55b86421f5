"""This tree against another commit's, on the same session, interleaved: `memory --json`, `whatif --set`, a 20-value sweep.

When the machine is shared, a figure from another day says little; this runs both trees in the same minutes,
each command as a fresh process (start-up included), alternating, and prints CPU medians (user + system).
The other tree is `git archive REV` extracted to a scratch folder (the compiled `_rawjson` copied in) and put
first on PYTHONPATH.

    python benchmarks/bench_whatif_ab.py SESSION [--rev b0b50df] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY = "tools.truncateToolOutputThreshold"


def cpu(args: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["nice", "-n", "10", sys.executable, "-m", "doctor", *args], capture_output=True, env=env,
                   check=True, cwd=tempfile.gettempdir())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("session", type=Path)
    parser.add_argument("--rev", default="b0b50df")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    other = scratch / "tree"
    other.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(other)], input=archive, check=True)
    for built in (ROOT / "doctor" / "core").glob("*.so"):
        shutil.copy(built, other / "doctor" / "core")
    home = scratch / "home"
    home.mkdir()
    envs = {"this tree": {"HOME": str(home), "PATH": os.environ["PATH"]},
            args.rev: {"HOME": str(home), "PATH": os.environ["PATH"], "PYTHONPATH": str(other)}}
    session = str(args.session)
    kinds = {"memory": ["memory", session, "--json"], "whatif": ["whatif", session, "--json", "--set", f"{KEY}=10000"],
             "sweep": ["whatif", session, "--json", "--sweep", f"{KEY}=5000..100000:5000"]}
    runs: dict[tuple[str, str], list[float]] = {}
    load = os.getloadavg()[0]
    for _ in range(args.repeats):
        for kind, command in kinds.items():
            for tree, env in envs.items():
                runs.setdefault((kind, tree), []).append(cpu(command, env))
    for tree in envs:
        medians = {kind: statistics.median(runs[kind, tree]) for kind in kinds}
        print(f"{tree}: " + ", ".join(f"{kind} {value:,.0f} ms" for kind, value in medians.items())
              + f"; replay / memory {medians['whatif'] / medians['memory']:.2f}, "
                f"sweep / replay {medians['sweep'] / medians['whatif']:.2f}")
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; CPU medians of {args.repeats}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
