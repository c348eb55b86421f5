"""Claude reader speed and memory on a 100 MB session, beside a bare-parse baseline.

The session is synthesised from the real big-outputs recording (Claude Code
2.1.332): its records are repeated with fresh uuids, message ids and tool_use
ids until the file reaches the target size, so the shapes (prompt snapshots,
30 KB toolUseResult copies, persisted stubs) are the client's own.

Each measurement runs in a fresh subprocess (so ru_maxrss is that run's peak):
- baseline: `orjson.loads` of every line, result discarded;
- reader: `claude.read(path)` then `analyze_tool_result_retention(history())`.
Both run REPEATS times, interleaved; medians are reported. Usage:
    python benchmarks/bench_claude_reader.py [--mb 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = next((ROOT / "tests/recordings/claude/big-outputs/home/.claude/projects").glob("*/*.jsonl"))
RESULTS = ROOT / "benchmarks" / "RESULTS-claude-reader.md"
ID_KEYS = ("uuid", "parentUuid", "sourceToolAssistantUUID", "promptId")

BASELINE = """
import orjson, resource, sys, time
start = time.perf_counter()
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        if line.strip():
            orjson.loads(line)
elapsed = time.perf_counter() - start
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

READER = """
import resource, sys, time
from pathlib import Path
from doctor.core.analysis import analyze_tool_result_retention
from doctor.sources import claude
start = time.perf_counter()
session = claude.read(Path(sys.argv[1]))
analysis = analyze_tool_result_retention(session.history())
elapsed = time.perf_counter() - start
assert analysis.stats.tool_result_count > 0
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, analysis.stats.tool_result_count)
"""


def renamed(text: str, copy: int, ids: list[str]) -> str:
    for original in ids:
        text = text.replace(original, f"{original[:-6]}{copy:06d}")
    return text


def turn_source() -> tuple[str, list[str]]:
    """The recording's lines, and its ids longest first (what `renamed` replaces in each copy)."""
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    ids: set[str] = set()
    for line in lines:
        record = json.loads(line)
        ids.update(record[key] for key in ID_KEYS if isinstance(record.get(key), str))
        message = record.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str):
                ids.add(message["id"])
            for block in message.get("content") if isinstance(message.get("content"), list) else ():
                ids.update(block[key] for key in ("id", "tool_use_id") if isinstance(block.get(key), str))
    return "\n".join(lines) + "\n", sorted(ids, key=len, reverse=True)


def synthesise(target: Path, megabytes: int) -> int:
    """Repeat the recording's records with new ids until `target` holds `megabytes` MB."""
    body, ordered = turn_source()
    written = copies = 0
    with open(target, "w", encoding="utf-8") as handle:
        while written < megabytes * 1_000_000:
            chunk = renamed(body, copies, ordered)
            handle.write(chunk)
            written += len(chunk.encode())
            copies += 1
    return copies


def run(script: str, path: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.split()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "synthetic-session.jsonl"
        copies = synthesise(path, args.mb)
        size = path.stat().st_size
        base_times, base_rss, read_times, read_rss = [], [], [], []
        results = 0
        for _ in range(args.repeats):
            elapsed, rss = run(BASELINE, path)
            base_times.append(float(elapsed))
            base_rss.append(int(rss))
            elapsed, rss, results = run(READER, path)
            read_times.append(float(elapsed))
            read_rss.append(int(rss))
    base, read = statistics.median(base_times), statistics.median(read_times)
    mib = size / 2**20
    report = "\n".join([
        "# Claude reader benchmark",
        "",
        f"Input: {size:,} bytes ({copies} copies of `{SOURCE.name}` from tests/recordings/claude/big-outputs, "
        f"fresh ids per copy), {int(results):,} tool results in the history.",
        f"Python {sys.version.split()[0]}; {args.repeats} runs each, interleaved, each in a fresh subprocess; medians.",
        "",
        "| run | time (s) | throughput (MiB/s) | peak RSS (MiB) |",
        "|---|---:|---:|---:|",
        f"| baseline: orjson.loads per line, discarded | {base:.3f} | {mib / base:.1f} | {statistics.median(base_rss) / 1024:.1f} |",
        f"| claude.read + analyze_tool_result_retention | {read:.3f} | {mib / read:.1f} | {statistics.median(read_rss) / 1024:.1f} |",
        "",
        f"Throughput ratio reader / baseline: **{base / read:.2f}×** (goal ≥ 0.7×).",
        f"Reader peak RSS: **{statistics.median(read_rss) / 1024:.1f} MiB** (goal < 150 MB).",
        "",
        f"Raw times (s): baseline {', '.join(f'{t:.3f}' for t in base_times)}; "
        f"reader {', '.join(f'{t:.3f}' for t in read_times)}.",
        "",
    ])
    RESULTS.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
