"""Retention analysis of a live history: doctor (public API) against Qwen Code's own analyzer, one run.

The history: 100,000 tool results (~100 M chars; ASCII, BMP and astral text, a
few oversized results, results already bounded by Qwen's sentinels), built once
in this process and written as JSON for Node.

Measured, medians of `--repeat` runs:
(a) a full analysis: Qwen's `analyzeToolResultRetention` (chunk-CK5HUN74.js, in
    Node, warm) vs doctor's Qwen counters (`qwen_retention_totals`) and vs the
    full report (`doctor.attach(history).report()`, a new session each run);
(b) a live refresh after the host appends 1,000 results: the second
    `LiveSession.report()` vs Qwen's full rescan of the longer history;
(c) extra memory during analysis: tracemalloc's peak around each call.
Goals (issue 2): (a) within 5× of Qwen, (b) ≤ 0.5× of Qwen's rescan, (c) ≤ 2 MB.

Usage: python benchmarks/bench_retention.py [--results 100000] [--repeat 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import doctor
from doctor.core.budgets import BudgetRegistry
from doctor.core.result_table import qwen_retention_totals
from tests.reference.oracle import chunks_dir, oracle_available

TOOLS = ("run_shell_command", "read_file", "grep_search", "glob", "web_fetch", "mcp__github__search_code")
TEXTS = (
    "plain ASCII output line number {i} with some padding to make it longer\n",
    "sortie accentuée numéro {i} — “guillemets” et ünïcödé ĀĂĄ\n",
    "emoji 🙂 line {i} with astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and CJK 漢字かな\n",
)
PREFIXES = ("", "", "", "", "", "Tool output was too large and has been truncated.\n", "<persisted-output>\n")

NODE_TIMER = r"""
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";
const [chunks, file, extra, repeat] = process.argv.slice(1);
const { analyzeToolResultRetention } = await import(pathToFileURL(path.join(chunks, "chunk-CK5HUN74.js")).href);
const { history, appended, budgets } = JSON.parse(readFileSync(file, "utf8"));
const options = { thresholdChars: 25000, resolveToolBudgetChars: (n) => (n in budgets ? (budgets[n] ?? Infinity) : undefined) };
function time(h) {
  const runs = [];
  let result;
  for (let i = 0; i < Number(repeat); i++) {
    const start = process.hrtime.bigint();
    result = analyzeToolResultRetention(h, options);
    runs.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  runs.sort((a, b) => a - b);
  return { ms: runs[Math.floor(runs.length / 2)], result };
}
const full = time(history);
const longer = history.concat(appended);
const rescan = time(longer);
process.stdout.write(JSON.stringify({ full, rescan }));
"""


def _result(i: int, rng: random.Random, chars: int) -> dict:
    text = TEXTS[i % len(TEXTS)].format(i=i)
    output = rng.choice(PREFIXES) + text * max(1, chars // len(text))
    tool = TOOLS[i % len(TOOLS)]
    if i % 997 == 0:
        response = {"error": output}
    else:
        response = {"output": output}
    return {"functionResponse": {"id": f"call_{i}", "name": tool, "response": response}}


def build_history(results: int, total_chars: int, seed: int = 7, start: int = 0) -> list[dict]:
    """Model calls and user results, a turn every 20 results, ~total_chars of output; a few oversized."""
    rng = random.Random(seed + start)
    mean = total_chars // results
    history: list[dict] = []
    i = start
    while i < start + results:
        if (i - start) % 20 == 0:
            history.append({"role": "user", "parts": [{"text": f"prompt {i}"}]})
        batch = min(rng.randint(1, 4), start + results - i)
        history.append({"role": "model", "parts": [
            {"functionCall": {"id": f"call_{j}", "name": TOOLS[j % len(TOOLS)], "args": {}}} for j in range(i, i + batch)
        ]})
        parts = []
        for j in range(i, i + batch):
            chars = 60_000 if j % 5_000 == 1 else int(rng.expovariate(1 / mean))
            parts.append(_result(j, rng, chars))
        history.append({"role": "user", "parts": parts})
        i += batch
    return history


def _budgets(registry: BudgetRegistry) -> dict:
    out = {}
    for name in TOOLS:
        budget = registry.registered_budget(name)
        if budget is not None:
            out[name] = None if budget.chars == float("inf") else budget.chars  # JSON null = Infinity in the timer
    return out


def _median_ms(call, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs)


def _peak(call) -> int:
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def _qwen_totals(history, registry: BudgetRegistry):
    def resolve(name):
        budget = registry.registered_budget(name)
        return None if budget is None else budget.chars

    return qwen_retention_totals(history, threshold_chars=25_000, resolve_tool_budget=resolve)


def _refreshed_session(history: list, appended: list):
    """A session that reported on `history`, whose host has since appended `appended`."""
    live = list(history)  # the host's own list (references only)
    session = doctor.attach(live)
    session.report()
    live.extend(appended)
    return session


def _refresh(history: list, appended: list, repeat: int) -> tuple[float, int, object]:
    """Median time and peak memory of the report after the append."""
    runs, report = [], None
    for _ in range(repeat):
        session = _refreshed_session(history, appended)
        start = time.perf_counter()
        report = session.report()
        runs.append((time.perf_counter() - start) * 1000)
    peak = _peak(_refreshed_session(history, appended).report)
    return statistics.median(runs), peak, report


def _counters(stats: dict) -> dict:
    return {key: stats[key] for key in ("toolResultCount", "totalChars", "largestResultChars", "oversizedResultCount")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--chars", type=int, default=100_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "RESULTS-retention.md")
    args = parser.parse_args()
    if (why := oracle_available()) is not None:
        print(f"cannot run Qwen's analyzer: {why}", file=sys.stderr)
        return 2

    history = build_history(args.results, args.chars)
    appended = build_history(1_000, args.chars // args.results * 1_000, start=args.results)
    registry = BudgetRegistry()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "history.json"
        data.write_text(json.dumps({"history": history, "appended": appended, "budgets": _budgets(registry)},
                                   ensure_ascii=False), encoding="utf-8")
        node = subprocess.run(["node", "--input-type=module", "-e", NODE_TIMER, str(chunks_dir()), str(data),
                               "1000", str(args.repeat)], capture_output=True, text=True, check=True,
                              env={**os.environ, "NODE_OPTIONS": "--max-old-space-size=8192"})
    qwen = json.loads(node.stdout)

    totals = _qwen_totals(history, registry)
    report = doctor.attach(history).report()
    assert _counters(report.qwen_stats.to_qwen_json()) == _counters(qwen["full"]["result"]), qwen["full"]["result"]
    totals_ms = _median_ms(lambda: _qwen_totals(history, registry), args.repeat)
    report_ms = _median_ms(lambda: doctor.attach(history).report(), args.repeat)
    totals_peak = _peak(lambda: _qwen_totals(history, registry))
    report_peak = _peak(lambda: doctor.attach(history).report())
    refresh_ms, refresh_peak, refreshed = _refresh(history, appended, args.repeat)
    assert _counters(refreshed.qwen_stats.to_qwen_json()) == _counters(qwen["rescan"]["result"])

    chars = totals.total_chars
    rows = [
        ("(a) Qwen counters, full history", qwen["full"]["ms"], totals_ms, 5.0, "≤ 5×"),
        ("(a) full report (attach + report())", qwen["full"]["ms"], report_ms, 5.0, "≤ 5×"),
        ("(b) live refresh after +1,000 results", qwen["rescan"]["ms"], refresh_ms, 0.5, "≤ 0.5×"),
    ]
    memory = [
        ("(c) Qwen counters, full history", totals_peak),
        ("(c) full report, first analysis", report_peak),
        ("(c) live refresh after +1,000 results", refresh_peak),
    ]
    lines = [
        f"History: {totals.tool_result_count:,} tool results, {len(history):,} Contents, {int(chars):,} chars "
        f"(JS length); Qwen's counters and doctor's agree. Python {sys.version.split()[0]}, "
        f"Node {subprocess.run(['node', '--version'], capture_output=True, text=True, check=True).stdout.strip()}, "
        f"median of {args.repeat} runs.",
        "",
        "| measure | Qwen 0.24.4 (Node) | doctor | ratio | goal | met |",
        "|---|---:|---:|---:|---:|:-:|",
    ]
    for name, qwen_ms, ours_ms, goal, goal_text in rows:
        ratio = ours_ms / qwen_ms
        lines.append(f"| {name} | {qwen_ms:,.1f} ms | {ours_ms:,.1f} ms | {ratio:.2f}× | {goal_text} | "
                     f"{'yes' if ratio <= goal else 'no'} |")
    lines += ["", "| memory (tracemalloc peak above the history) | doctor | goal | met |", "|---|---:|---:|:-:|"]
    for name, peak in memory:
        lines.append(f"| {name} | {peak / 1024:,.0f} KiB | ≤ 2 MiB | {'yes' if peak <= 2 * 1024 * 1024 else 'no'} |")
    table = "\n".join(lines)
    print(table)
    args.out.write_text(
        "# Retention analysis: doctor vs Qwen Code 0.24.4\n\n"
        "`python benchmarks/bench_retention.py` (see its docstring for what is measured).\n\n" + table + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
