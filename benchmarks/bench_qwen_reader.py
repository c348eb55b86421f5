"""How fast, and in how little memory, the Qwen reader turns a big recording into retention numbers.

The recording is synthetic but made of real records: the lines of the
`multi-turn` recording (Qwen Code 0.24.4), repeated with fresh uuids so the
parent chain runs through the whole file, until it reaches `--size-mb`.
With `--content realistic` (the default) every tool output and display of
more than 64 chars is replaced by shell-like text of the same length (`realistic_text`:
newlines, tabs, quotes, backslashes, ANSI colours, some accented, CJK and astral
characters), written compactly as Node's JSON.stringify does; `--content recorded`
keeps the recording's own text. `--keep PATH` writes the file there (or reuses it).

Measured in the same run, medians of `--repeat` runs, each in a fresh
subprocess, interleaved (so drift and other load hit every kind alike):
- baseline: `for line in open(f, "rb"): msgspec.json.Decoder().decode(line)` (the issue's),
  and the same with orjson.loads; the faster one is the yardstick;
- reader: `open_session` + the streamed history through Qwen's retention
  counters (`qwen_retention_totals`), imports included.
Memory: the child's VmHWM is its peak resident set, which counts the pages of the
memory-mapped recording the reader touched (it drops them every 8 MB, but they
count while mapped); the child also reports RssAnon and RssFile from
/proc/self/status at the end (the heap vs file pages still mapped). Not
ru_maxrss, which Linux carries over from the parent across fork+exec. The load
average is printed before and after.

Usage: python benchmarks/bench_qwen_reader.py [--size-mb 1024] [--repeat 3] [--keep PATH] [--out FILE]
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
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "recordings" / "qwen" / "multi-turn" / "session.jsonl"


_ASCII_NAMES = ["main.py", "README.md", "build.log", "src/lib.rs", "package.json", "Makefile", "tests/test_io.py"]
_OTHER_NAMES = ["café.txt", "naïve_bayes.py", "日本語.md", "données.csv", "😀.png", "テスト.txt", "𝔘𝔫𝔦.txt"]
_ASCII_WORDS = ["error", "warning", "ok", "return", "value", "path", "null", '"quoted"', "'single'",
                "C:\\Users\\dev", "{}", "[1, 2]", "TODO", "self", "None", "import", "def", "0x1f"]
_OTHER_WORDS = ["Zürich", "straße", "中文", "错误", "ファイル", "🚀", "✓", "→", "déjà", "emoji😀"]


def realistic_text(seed: int = 12, size: int = 1 << 22) -> str:
    """Shell-like output: ls and grep lines, tab-separated columns, ANSI colours, mostly ASCII."""
    rng = random.Random(seed)

    def name() -> str:
        return rng.choice(_OTHER_NAMES if rng.random() < 0.15 else _ASCII_NAMES)

    def word() -> str:
        return rng.choice(_OTHER_WORDS if rng.random() < 0.1 else _ASCII_WORDS)

    lines, total = [], 0
    while total < size:
        kind = rng.random()
        if kind < 0.3:
            line = f"-rw-r--r--  1 dev staff {rng.randint(0, 99999):>6} Dec {rng.randint(1, 28):>2} 14:{rng.randint(0, 59):02d} {name()}"
        elif kind < 0.55:
            line = f'src/{name()}:{rng.randint(1, 900)}:\t    return "{word()}"\t# ' + " ".join(word() for _ in range(rng.randint(1, 6)))
        elif kind < 0.7:
            line = "\t".join(word() for _ in range(rng.randint(2, 8)))
        elif kind < 0.78:
            line = f"\x1b[3{rng.randint(1, 7)}m{word()}\x1b[0m {word()} {{\"k\": {rng.randint(0, 9)}}}"
        elif kind < 0.92:
            line = " ".join(word() for _ in range(rng.randint(3, 14)))
        else:
            line = ""
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


class _Texts:
    """Slices of one realistic corpus, at pseudo-random offsets, of the lengths asked for."""

    def __init__(self) -> None:
        self.corpus = realistic_text()
        self.rng = random.Random(7)

    def take(self, length: int) -> str:
        start = self.rng.randrange(0, len(self.corpus) - length) if length < len(self.corpus) else 0
        return (self.corpus[start : start + length] * (1 + length // len(self.corpus)))[:length]


def _realistic(record: dict, texts: _Texts) -> dict:
    """The record with its long tool outputs and displays replaced by realistic text of the same length."""
    message = record.get("message")
    if isinstance(message, dict):
        parts = []
        for part in message.get("parts") or ():
            response = (part.get("functionResponse") or {}).get("response") if isinstance(part, dict) else None
            if isinstance(response, dict):
                response = {k: texts.take(len(v)) if isinstance(v, str) and len(v) > 64 else v for k, v in response.items()}
                part = {**part, "functionResponse": {**part["functionResponse"], "response": response}}
            parts.append(part)
        record = {**record, "message": {**message, "parts": parts}}
    result = record.get("toolCallResult")
    if isinstance(result, dict):
        display = result.get("resultDisplay")
        if isinstance(display, str) and len(display) > 64:
            display = texts.take(len(display))
        elif isinstance(display, dict) and display.get("type") == "shell_result" and len(display.get("text", "")) > 64:
            text = texts.take(len(display["text"]))
            display = {**display, "text": text, "output": text if display["output"] == display["text"] else texts.take(len(display["output"]))}
        record = {**record, "toolCallResult": {**result, "resultDisplay": display}}
    return record


def copies(content: str = "realistic") -> Iterator[tuple[bytes, int]]:
    """Endless copies of the recording's records, re-chained with fresh uuids (each copy's first
    record names the last one before it as parent): (the lines, how many)."""
    template = [json.loads(line) for line in SOURCE.open("rb")]
    texts = _Texts() if content == "realistic" else None
    parent = None
    while True:
        lines = []
        for record in template:
            if texts is not None:
                record = _realistic(record, texts)
            record = dict(record, uuid=str(uuid.uuid4()), parentUuid=parent)
            lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            parent = record["uuid"]
        yield b"".join(lines), len(lines)


def generate(path: Path, size_mb: int, content: str = "realistic", chunks: Iterator[tuple[bytes, int]] | None = None) -> int:
    """Write real records, re-chained with fresh uuids, up to size_mb; returns the record count.
    `chunks`: go on with these copies (bench_statusline appends the next one as one more turn)."""
    chunks = chunks or copies(content)
    target = size_mb * 1024 * 1024
    written = records = 0
    with path.open("wb") as out:
        while written < target:
            chunk, count = next(chunks)
            out.write(chunk)
            written += len(chunk)
            records += count
    return records


def run_baseline(path: str, decoder: str) -> None:
    if decoder == "msgspec":
        import msgspec

        decode = msgspec.json.Decoder().decode
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
        session.history_to_measure(),  # what `doctor memory` analyses
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
    status = {}
    with open("/proc/self/status") as handle:  # Linux: the peak, and the split of what is resident now
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "VmHWM"):
                status[key] = int(value.split()[0])
    # VmHWM, not ru_maxrss: Linux carries the parent's high-water mark across fork+exec into ru_maxrss.
    print(json.dumps({"seconds": seconds, "peak_kib": status["VmHWM"], "status_kib": status, "result": result}))


def measure(kind: str, path: Path, tree: Path | None = None) -> dict:
    """One child run; `tree`: the reader of that checkout instead of this one (`--baseline-tree`)."""
    env = {**os.environ, "PYTHONPATH": str(tree)} if tree else None
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], check=True, capture_output=True, text=True, cwd=ROOT,
        env=env,
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
    parser.add_argument("--keep", type=Path, default=None, help="write the recording here, or reuse it")
    parser.add_argument("--baseline-tree", type=Path, help="also run the reader of this checkout (e.g. main's)")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.baseline_tree:
        import compileall

        compileall.compile_dir(args.baseline_tree / "doctor", quiet=1)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-qwen-") as tmp:
        path = args.keep or Path(tmp) / "session.jsonl"
        records = generate(path, args.size_mb) if not path.exists() else sum(1 for _ in path.open("rb"))
        size = path.stat().st_size
        kinds = [*available_decoders(), "reader", *(["tree reader"] if args.baseline_tree else [])]
        runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
        for _ in range(args.repeat):
            for kind in kinds:  # interleaved, so drift hits every kind alike
                tree = args.baseline_tree if kind == "tree reader" else None
                runs[kind].append(measure("reader" if tree else kind, path, tree))
    load_after = os.getloadavg()
    medians = {
        kind: (statistics.median(r["seconds"] for r in rs), statistics.median(r["peak_kib"] for r in rs))
        for kind, rs in runs.items()
    }
    baseline_kind = min(available_decoders(), key=lambda k: medians[k][0])
    baseline_seconds = medians[baseline_kind][0]
    mb = size / 1024 / 1024
    lines = [
        f"Recording: {mb:,.0f} MB, {records:,} records; medians of {args.repeat} interleaved runs, "
        f"Python {sys.version.split()[0]}; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after",
        "",
        "| run | seconds (median) | all runs | MB/s | × baseline | peak RSS (VmHWM) MB | RssAnon MB at end | RssFile MB at end |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for kind in kinds:
        seconds, peak = medians[kind]
        label = {"reader": "reader + retention counters",
                 "tree reader": f"reader of {args.baseline_tree}"}.get(kind, f"baseline ({kind})")
        every = ", ".join(f"{r['seconds']:.2f}" for r in runs[kind])
        anon = statistics.median(r["status_kib"].get("RssAnon", 0) for r in runs[kind]) / 1024
        mapped = statistics.median(r["status_kib"].get("RssFile", 0) for r in runs[kind]) / 1024
        lines.append(f"| {label} | {seconds:.2f} | {every} | {mb / seconds:,.0f} | {baseline_seconds / seconds:.2f} | "
                     f"{peak / 1024:,.0f} | {anon:,.0f} | {mapped:,.0f} |")
    pairs = [b["seconds"] / r["seconds"] for b, r in zip(runs[baseline_kind], runs["reader"])]
    lines += ["", f"× baseline per interleaved pair: {', '.join(f'{p:.2f}' for p in pairs)}",
              f"Reader result: {runs['reader'][0]['result']}"]
    if args.baseline_tree:
        tree_pairs = [t["seconds"] / r["seconds"] for r, t in zip(runs["reader"], runs["tree reader"])]
        assert runs["tree reader"][0]["result"] == runs["reader"][0]["result"]
        lines.append(f"reader of {args.baseline_tree} / this reader: median {statistics.median(tree_pairs):.2f}× "
                     f"(pairs: {', '.join(f'{p:.2f}' for p in tree_pairs)})")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with args.out.open("a") as out:
            out.write(text + "\n\n")


if __name__ == "__main__":
    main()
