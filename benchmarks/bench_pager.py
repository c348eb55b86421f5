"""Pager engine speed and memory, each figure beside its baseline from the same run.

    python benchmarks/bench_pager.py [--size-gb 4] [--line-gb 1] [--dir DIR] [--runs 3]

Generates (or reuses) a file of short lines and a file that is one single line, then
prints medians of ``--runs`` runs: time to the first page, pages after indexing, index
throughput against ``bytes.count(b"\\n")`` over the same file, index memory, and search
throughput against ``grep -c``. The files are left in place for reuse; delete them after.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from doctor.spill.pager import Pager

NEEDLE = "NEEDLE-7f3a"
GIB = 1 << 30


def make_lines_file(path: Path, size: int) -> None:
    """Short log-like lines of varying length; the needle appears once, near the end."""
    if path.exists() and path.stat().st_size == size:
        return
    rng = random.Random(7)
    words = [f"w{i}".encode() * rng.randint(1, 8) for i in range(1000)]
    block = b"".join(b" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) + b"\n" for _ in range(50_000))
    with open(path, "wb") as stream:
        while stream.tell() + len(block) < size - 100:
            stream.write(block)
        tail = f"the {NEEDLE} is here\n".encode()
        stream.write(b"x" * (size - stream.tell() - len(tail) - 1) + b"\n" + tail)


def make_single_line_file(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size == size:
        return
    unit = ('{"k": "value", "n": 12345, "s": "grüße"}, ' * 200).encode()
    with open(path, "wb") as stream:
        while stream.tell() + len(unit) < size - 64:
            stream.write(unit)
        stream.write(NEEDLE.encode().ljust(size - stream.tell(), b"."))


def median_seconds(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def paired_medians(first, second, runs: int) -> tuple[float, float]:
    """Median times of two actions run in alternation."""
    first_times, second_times = [], []
    for _ in range(runs):
        for action, times in ((first, first_times), (second, second_times)):
            started = time.perf_counter()
            action()
            times.append(time.perf_counter() - started)
    return statistics.median(first_times), statistics.median(second_times)


def count_newlines(path: Path) -> int:
    """The memchr-class baseline: read 1 MiB chunks and ``bytes.count`` them."""
    buffer = bytearray(1 << 20)
    total = 0
    with open(path, "rb", buffering=0) as stream:
        while got := stream.readinto(buffer):
            total += buffer.count(b"\n", 0, got)
    return total


def index_once(path: Path) -> Pager:
    pager = Pager(path)
    pager.wait_until_indexed()
    return pager


def first_page(path: Path, limit: int) -> None:
    with Pager(path) as pager:
        pager.page(0, limit)


def measure(path: Path, runs: int, *, single_line: bool) -> list[tuple[str, str, str, str]]:
    """Rows of (measure, doctor, baseline, ratio or note)."""
    size = path.stat().st_size
    rows = []
    first = median_seconds(lambda: first_page(path, 1 if single_line else 50), runs)
    rows.append(("time to first page", f"{first * 1000:.1f} ms", "goal < 50 ms", ""))
    if single_line:
        first_full = median_seconds(lambda: first_page(path, 50), runs)
        rows.append(("page(0, 50): scans the line for its end", f"{first_full * 1000:.1f} ms", "", ""))

    # Alternate the two so a busy neighbour on a shared machine slows both alike.
    index_time, count_time = paired_medians(lambda: index_once(path).close(), lambda: count_newlines(path), runs)
    rows.append(
        (
            "index throughput",
            f"{size / index_time / 1e9:.2f} GB/s",
            f"{size / count_time / 1e9:.2f} GB/s bytes.count",
            f"{count_time / index_time:.2f}x (goal >= 0.8x)",
        )
    )
    with index_once(path) as pager:
        memory = pager.index_memory_bytes
        rows.append(("index memory", f"{memory:,} B", f"file {size:,} B", f"{memory / size * 100:.4f}% (goal < 0.1%)"))
        if single_line:
            chars = size  # close enough for a window near the middle
            middle = median_seconds(lambda: pager.char_window(0, chars // 2, 200), runs)
            rows.append(("char_window middle of line (after first pass)", f"{middle * 1000:.2f} ms", "", ""))
            end = median_seconds(lambda: pager.char_window(0, chars - 300, 200), runs)
            rows.append(("char_window near line end", f"{end * 1000:.2f} ms", "", ""))
        else:
            lines = pager.line_count
            middle = median_seconds(lambda: pager.page(lines // 2, 50), runs)
            end = median_seconds(lambda: pager.page(lines - 50, 50), runs)
            rows.append(("page(middle, 50) after indexing", f"{middle * 1000:.2f} ms", "", ""))
            rows.append(("page(end, 50) after indexing", f"{end * 1000:.2f} ms", "", ""))
        assert pager.search(NEEDLE) is not None, "the needle must be found"
        regex_time = median_seconds(lambda: pager.search(NEEDLE.replace("-", "."), regex=True), runs)
        grep = shutil.which("grep")
        search_time, grep_time = paired_medians(
            lambda: pager.search(NEEDLE),
            lambda: subprocess.run([grep, "-c", NEEDLE, str(path)], check=True, capture_output=True),
            runs,
        )
    rows.append(
        (
            "search literal (whole file)",
            f"{size / search_time / 1e9:.2f} GB/s",
            f"{size / grep_time / 1e9:.2f} GB/s grep -c",
            f"{grep_time / search_time:.2f}x",
        )
    )
    rows.append(("search regex (whole file)", f"{size / regex_time / 1e9:.2f} GB/s", "", f"{grep_time / regex_time:.2f}x"))
    return rows


def print_table(title: str, rows: list[tuple[str, str, str, str]]) -> None:
    print(f"\n### {title}\n")
    print("| measure | doctor | baseline | ratio / goal |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=4.0)
    parser.add_argument("--line-gb", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    lines_path = options.dir / f"doctor-bench-lines-{options.size_gb:g}g.txt"
    single_path = options.dir / f"doctor-bench-oneline-{options.line_gb:g}g.txt"
    make_lines_file(lines_path, int(options.size_gb * GIB))
    make_single_line_file(single_path, int(options.line_gb * GIB))
    print(f"medians of {options.runs} runs; files: {lines_path}, {single_path}")
    print_table(f"{options.size_gb:g} GiB of short lines", measure(lines_path, options.runs, single_line=False))
    print_table(f"{options.line_gb:g} GiB single line", measure(single_path, options.runs, single_line=True))


if __name__ == "__main__":
    main()
