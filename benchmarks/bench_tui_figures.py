"""How long after a bare Textual app paints does `doctor memory PATH` show a big recording's figures?

Issue 12 asks for a 100 MB Qwen recording's retention figures on screen at most 1.0 s after a
bare Textual app's first paint. Both are measured from the same moment, the launch of a fresh
Python process (the parent's wall clock just before it starts the child, so interpreter start-up
and imports count for both):
- bare: a `textual.app.App` with one Static, run headless; the moment its first paint is done;
- doctor: `doctor memory PATH` through `doctor.cli.main` exactly as on a terminal (the TUI is
  forced on; the app is run headless at 120x40), and the moment the first screen holding the
  retention figures (the Overview with the totals) has been painted. The doctor child also
  notes when its own first paint (the loading screen) happened.
Runs alternate bare/doctor `--repeat` times; medians and the difference are reported, with the
load average (the machine is shared).

The recording is `bench_qwen_reader.generate`'s (real Qwen Code 0.24.4 records, realistic tool
outputs) at `--size-mb`; `--keep PATH` writes it there or reuses it.

Usage: python benchmarks/bench_tui_figures.py [--size-mb 100] [--repeat 5] [--keep PATH] [--out FILE]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE = (120, 40)


def child_bare(launched: float) -> dict:
    from textual.app import App
    from textual.widgets import Static

    marks: dict = {}

    class Bare(App):
        def compose(self):
            yield Static("bare")

        def on_mount(self) -> None:
            self.call_after_refresh(self.painted)

        def painted(self) -> None:
            marks["first_paint"] = time.time() - launched
            self.exit()

    Bare().run(headless=True, size=SIZE)
    return marks


def child_doctor(launched: float, path: str) -> dict:
    sys.path.insert(0, str(ROOT))
    import doctor.tui
    from doctor.cli import main
    from doctor.commands import memory
    from doctor.tui.app import DoctorApp
    from doctor.tui.screens.memory import MemoryScreen

    marks: dict = {}
    shown = MemoryScreen.on_report_ready

    def on_report_ready(self, message) -> None:
        shown(self, message)
        if "figures" not in marks:
            self.call_after_refresh(figures_painted, self)

    def figures_painted(screen) -> None:
        marks["figures"] = time.time() - launched
        marks["totals"] = screen.report.retention.stats.to_qwen_json() if screen.report.retention else None
        screen.app.exit()

    def headless(report=None, *, load=None, provider=None, session=None, options=None, theme=None) -> None:
        from doctor.tui.provider import CallableProvider

        class Timed(DoctorApp):
            CSS_PATH = str(ROOT / "doctor" / "tui" / "doctor.tcss")  # resolved against this module otherwise

            def on_mount(self) -> None:  # DoctorApp.on_mount runs after this one
                self.call_after_refresh(lambda: marks.setdefault("first_paint", time.time() - launched))

        Timed(provider or CallableProvider(load, session=session), theme=theme).run(headless=True, size=SIZE)

    MemoryScreen.on_report_ready = on_report_ready
    memory._wants_tui = lambda args: True
    doctor.tui.run_memory_app = headless
    main(["memory", path])
    return marks


def measure(kind: str, path: Path) -> dict:
    launched = time.time()
    args = [sys.executable, __file__, "--child", kind, repr(launched), str(path)]
    output = subprocess.run(args, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the recording here, or reuse it")
    parser.add_argument("--out", type=Path, help="append the Markdown table to this file")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, launched, path = args.child
        marks = child_bare(float(launched)) if kind == "bare" else child_doctor(float(launched), path)
        print(json.dumps(marks))
        return 0

    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
    from bench_qwen_reader import generate

    with tempfile.TemporaryDirectory(prefix="doctor-bench-figures-") as tmp:
        path = args.keep or Path(tmp) / "session.jsonl"
        if not path.exists():
            generate(path, args.size_mb)
        size = path.stat().st_size
        load_before = os.getloadavg()
        bare, doctor = [], []
        for _ in range(args.repeat):  # interleaved, so drift hits both alike
            bare.append(measure("bare", path))
            doctor.append(measure("doctor", path))
        load_after = os.getloadavg()
    bare_paint = statistics.median(m["first_paint"] for m in bare)
    doctor_paint = statistics.median(m["first_paint"] for m in doctor)
    figures = statistics.median(m["figures"] for m in doctor)
    gaps = [d["figures"] - b["first_paint"] for b, d in zip(bare, doctor)]
    lines = [
        f"Recording: {size / 1024 / 1024:,.0f} MB (Qwen, realistic content); {args.repeat} runs each, alternating; "
        f"Python {sys.version.split()[0]}; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after",
        "",
        "| seconds from process launch (median) | bare Textual app | doctor memory |",
        "|---|---:|---:|",
        f"| first paint | {bare_paint:.2f} | {doctor_paint:.2f} |",
        f"| retention figures painted | — | {figures:.2f} |",
        "",
        f"Figures after the bare app's first paint: median {statistics.median(gaps):.2f} s "
        f"(per pair: {', '.join(f'{g:.2f}' for g in gaps)}); goal ≤ 1.00 s.",
        f"Totals on screen: {doctor[0].get('totals')}",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with args.out.open("a", encoding="utf-8") as out:
            out.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
