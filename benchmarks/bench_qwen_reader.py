"""How fast, and in how little memory, the Qwen reader turns a big recording into retention numbers.

The recording is synthetic but made of real records: the lines of the
`multi-turn` recording (Qwen Code 0.24.4), repeated with fresh uuids so the
parent chain runs through the whole file, until it reaches `--size-mb`.

Measured in the same run, medians of `--repeat` runs, each in a fresh
subprocess (so ru_maxrss is that run's peak):
- baseline: the fastest of orjson and msgspec decoding each line and
  discarding it (the floor for anything that must parse every line);
- reader: `open_session` + the streamed history through Qwen's retention
  counters (`qwen_retention_totals`).

Usage: python benchmarks/bench_qwen_reader.py [--size-mb 1024] [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "recordings" / "qwen" / "multi-turn" / "session.jsonl"


def generate(path: Path, size_mb: int) -> int:
    """Write real records, re-chained with fresh uuids, up to size_mb; returns the record count."""
    template = [json.loads(line) for line in SOURCE.open("rb")]
    target = size_mb * 1024 * 1024
    written = records = 0
    parent = None
    with path.open("wb") as out:
        while written < target:
            for record in template:
                record = dict(record, uuid=str(uuid.uuid4()), parentUuid=parent)
                line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
                out.write(line)
                written += len(line)
                records += 1
                parent = record["uuid"]
    return records


def run_baseline(path: str, decoder: str) -> None:
    if decoder == "msgspec":
        import msgspec

        decode = msgspec.json.decode
    else:
        import orjson

        decode = orjson.loads
    with open(path, "rb") as handle:
        for line in handle:
            decode(line)


def run_reader(path: str) -> dict:
    from doctor.assemble import ReportOptions, resolve_settings
    from doctor.core.result_table import qwen_retention_totals
    from doctor.sources.registry import open_session

    session = open_session(Path(path))
    budgets = resolve_settings(ReportOptions(use_default_settings_files=False, env={}), session.project_dir).budgets
    totals = qwen_retention_totals(
        session.history(),
        threshold_chars=budgets.limits.threshold,
        resolve_tool_budget=lambda name: (b.chars if (b := budgets.registered_budget(name)) else None),
        image_token_estimate=1600,
    )
    return {"toolResultCount": totals.tool_result_count, "totalChars": totals.total_chars}


def child(kind: str, path: str) -> None:
    """One measured run: prints seconds, peak RSS (KiB) and the result as JSON."""
    start = time.perf_counter()
    result = run_reader(path) if kind == "reader" else run_baseline(path, kind)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_kib": peak, "result": result}))


def measure(kind: str, path: Path) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def available_decoders() -> list[str]:
    decoders = ["orjson"]
    try:
        import msgspec  # noqa: F401

        decoders.append("msgspec")
    except ImportError:
        pass
    return decoders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="append a Markdown table to this file")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench-qwen-") as tmp:
        path = Path(tmp) / "session.jsonl"
        records = generate(path, args.size_mb)
        size = path.stat().st_size
        kinds = [*available_decoders(), "reader"]
        runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
        for _ in range(args.repeat):
            for kind in kinds:  # interleaved, so drift hits every kind alike
                runs[kind].append(measure(kind, path))
    medians = {
        kind: (statistics.median(r["seconds"] for r in rs), statistics.median(r["peak_kib"] for r in rs))
        for kind, rs in runs.items()
    }
    baseline_kind = min(available_decoders(), key=lambda k: medians[k][0])
    baseline_seconds = medians[baseline_kind][0]
    mb = size / 1024 / 1024
    lines = [
        f"Recording: {mb:,.0f} MB, {records:,} records; medians of {args.repeat} runs, Python {sys.version.split()[0]}",
        "",
        "| run | seconds | MB/s | × baseline | peak RSS (MB) |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind in kinds:
        seconds, peak = medians[kind]
        label = f"baseline ({kind})" if kind != "reader" else "reader + retention counters"
        lines.append(f"| {label} | {seconds:.2f} | {mb / seconds:,.0f} | {baseline_seconds / seconds:.2f} | {peak / 1024:,.0f} |")
    lines += ["", f"Reader result: {runs['reader'][0]['result']}"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with args.out.open("a") as out:
            out.write(text + "\n\n")


if __name__ == "__main__":
    main()
