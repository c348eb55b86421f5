"""What the Claude, Codex and Gemini reader benchmarks share: the measuring loop.

Each run is a fresh `nice`d subprocess whose peak resident set is read from its own
`VmHWM`, every page it touched, mapped file pages included (not `ru_maxrss`: Linux
carries a parent's high-water mark across fork+exec, so children of a parent that
had just built a 1 GB file in memory all reported 1 GB). Baseline and
reader runs are interleaved so the drift of a shared machine hits both alike;
medians are reported with the load average before and after. The baseline is
the issue's: `for line in open(f, "rb"): decode(line)` with one
`msgspec.json.Decoder()` (for a single-document JSON file: one decode of the file).
The reader is what `doctor memory` does before rendering: `open_session`
(format detection included), then Qwen's retention counters over
`history_to_measure()`. Module imports happen before the clock starts in both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_baseline(path: str) -> dict:
    import msgspec

    decode = msgspec.json.Decoder().decode
    if path.endswith(".jsonl"):
        with open(path, "rb") as handle:
            for line in handle:
                decode(line)
    else:
        with open(path, "rb") as handle:
            decode(handle.read())
    return {}


def prepare(kind: str) -> None:
    """Imports, before the clock starts: a fixed cost that says nothing about reading."""
    import msgspec  # noqa: F401

    if kind == "reader":
        import doctor.assemble  # noqa: F401
        import doctor.core.result_table  # noqa: F401
        from doctor.sources.registry import available_readers

        available_readers()


def run_reader(path: str) -> dict:
    from doctor.assemble import ReportOptions, resolve_settings
    from doctor.core.result_table import qwen_retention_totals
    from doctor.sources.registry import open_session

    session = open_session(Path(path))
    budgets = resolve_settings(ReportOptions(use_default_settings_files=False, env={}), session.project_dir).budgets
    totals = qwen_retention_totals(
        session.history_to_measure(),
        threshold_chars=budgets.limits.threshold,
        resolve_tool_budget=lambda name: (b.chars if (b := budgets.registered_budget(name)) else None),
        image_token_estimate=1600,
    )
    return {"agent": session.agent, "toolResultCount": totals.tool_result_count, "totalChars": totals.total_chars,
            "side_channel": {k: [v.count, v.chars] for k, v in sorted(session.side_channel.items())}}


def peak_rss_kib() -> int:
    """This process's own peak resident set (VmHWM), unlike ru_maxrss not inherited across exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(kind: str, path: str) -> None:
    """One measured run: prints seconds, peak RSS (KiB) and the result as JSON."""
    prepare(kind)
    start = time.perf_counter()
    result = run_reader(path) if kind == "reader" else run_baseline(path)
    seconds = time.perf_counter() - start
    peak = peak_rss_kib()
    print(json.dumps({"seconds": seconds, "peak_kib": peak, "result": result}))


def measure(kind: str, path: Path, env: dict | None = None) -> dict:
    output = subprocess.run(
        ["nice", "-n", "5", sys.executable, __file__, kind, str(path)],
        check=True, capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})},
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def compare(path: Path, repeat: int, modes: dict[str, dict] | None = None) -> str:
    """Interleaved runs of the baseline and each reader mode (name → extra environment); a Markdown table."""
    modes = modes or {"reader": {}}
    load_before = os.getloadavg()
    runs: dict[str, list[dict]] = {"baseline": [], **{name: [] for name in modes}}
    for _ in range(repeat):
        runs["baseline"].append(measure("baseline", path))
        for name, env in modes.items():
            runs[name].append(measure("reader", path, env))
    load_after = os.getloadavg()
    base = statistics.median(r["seconds"] for r in runs["baseline"])
    mb = path.stat().st_size / 1e6
    lines = [
        f"Input: {path.stat().st_size:,} bytes; {repeat} interleaved runs each, fresh `nice -n 5` subprocesses, medians;"
        f" Python {sys.version.split()[0]}; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after.",
        "",
        "| run | median s | MB/s | baseline / run | median peak RSS (MiB) | raw times (s) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, rs in runs.items():
        seconds = statistics.median(r["seconds"] for r in rs)
        peak = statistics.median(r["peak_kib"] for r in rs) / 1024
        raw = ", ".join(f"{r['seconds']:.2f}" for r in rs)
        lines.append(f"| {name} | {seconds:.3f} | {mb / seconds:,.0f} | **{base / seconds:.2f}×** | {peak:.1f} | {raw} |")
    results = {json.dumps(r["result"], sort_keys=True) for name in modes for r in runs[name]}
    lines += ["", f"Reader result (identical in every mode and run: {len(results) == 1}): {sorted(results)[0]}"]
    first, *others = modes
    for other in others:  # e.g. the same reader from another tree: its time over this one's, pair by pair
        pairs = [o["seconds"] / f["seconds"] for f, o in zip(runs[first], runs[other])]
        lines.append(f"{other} / {first}: median {statistics.median(pairs):.2f}× (pairs: "
                     f"{', '.join(f'{p:.2f}' for p in pairs)})")
    return "\n".join(lines)


def tree_mode(tree: Path | None) -> dict[str, dict]:
    """The reader of another checkout (`--baseline-tree`, e.g. main's), run from its own tree."""
    if tree is None:
        return {}
    import compileall

    compileall.compile_dir(tree / "doctor", quiet=1)  # as this tree's are: imports are not what is timed
    return {f"reader of {tree}": {"PYTHONPATH": str(tree)}}


def bench_main(description: str, synthesise: Callable[[Path, int], int], source: Path, file_name: str) -> None:
    """The command line of a one-format reader benchmark: synthesise `--mb` MB with `synthesise(path, mb)`
    (it returns how many copies of `source` it wrote) unless `--keep` names a file that exists, then
    print `compare` of the baseline and the reader (and the pure-Python reader with `--pure`)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="write the session there (reused if it exists)")
    parser.add_argument("--pure", action="store_true", help="also run the reader with DOCTOR_PURE_PYTHON=1")
    parser.add_argument("--baseline-tree", type=Path, help="also run the reader of this checkout (e.g. main's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-reader-") as scratch:
        path = args.keep or Path(scratch) / file_name
        if not path.exists():
            print(f"{synthesise(path, args.mb)} copies of {source.name} written to {path}", file=sys.stderr)
        modes = {"reader": {}, **({"reader (DOCTOR_PURE_PYTHON=1)": {"DOCTOR_PURE_PYTHON": "1"}} if args.pure else {}),
                 **tree_mode(args.baseline_tree)}
        print(compare(path, args.repeat, modes))


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2])
