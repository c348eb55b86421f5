"""Does the TUI stay responsive while a large dump loads? The longest gap between timer ticks.

Issue 6 asks that no frame be blocked for more than 50 ms while a large dump loads. This
drives the real seam: `doctor memory PATH` as on a terminal (its loader captured from
`run_memory_app`), the app run headless with Textual's pilot, and a 100 Hz timer on the
app's event loop recording when each tick really ran. A gap well over 10 ms means the
loop was blocked (by the UI thread's own work, or by the loader thread holding the GIL).

The recording is synthetic but made of real records (`bench_qwen_reader.generate`: the
`multi-turn` Qwen Code 0.24.4 recording re-chained with fresh uuids) up to `--size-mb`.

Measured in the same process, side by side:
- baseline: the same app and timer with a loader that only sleeps (the loop's floor);
- doctor: the real loader, from the first tick until the report is on screen and the
  tables are filled (`--settle` seconds after it is ready, to catch the UI-side work).
Then, in the pager, `→` pressed through a `--line-mb` single-line spill file, measured
the same way (char windows are read on workers; the UI thread only draws).

Usage: python benchmarks/bench_tui_frames.py [--size-mb 50] [--line-mb 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from bench_qwen_reader import generate  # a sibling benchmark's generator

TICK = 0.01
BUDGET_MS = 50.0
SIZE = (120, 40)


class Ticks:
    """When a 100 Hz timer really fired; gaps beyond the interval are time the loop was blocked."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.marks: list[tuple[float, str]] = []

    def tick(self) -> None:
        self.times.append(time.perf_counter())

    def mark(self, phase: str) -> None:
        """From now on, gaps count towards `phase`."""
        self.marks.append((time.perf_counter(), phase))

    def gaps_ms(self, phase: str | None = None) -> list[float]:
        gaps = []
        for a, b in zip(self.times, self.times[1:]):
            if phase is None or self.phase_at(a) == phase:
                gaps.append((b - a) * 1000)
        return gaps

    def phase_at(self, moment: float) -> str:
        current = ""
        for at, phase in self.marks:
            if at <= moment:
                current = phase
        return current

    def summary(self, phase: str | None = None) -> dict:
        gaps = self.gaps_ms(phase) or [0.0]
        ordered = sorted(gaps)
        return {  # ticks: gaps that started in the phase
            "ticks": len(self.gaps_ms(phase)),
            "max_ms": max(gaps),
            "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
            "median_ms": statistics.median(gaps),
            "over_budget": sum(gap > BUDGET_MS for gap in gaps),
        }


def capture_loader(path: Path):
    """(load, session) exactly as `doctor memory PATH` hands them to the TUI on a terminal."""
    import doctor.tui
    from doctor.cli import main
    from doctor.commands import memory

    captured = {}

    def fake_run(report=None, *, load=None, session=None, **kwargs):
        captured.update(load=load, session=session)

    saved = memory._wants_tui, doctor.tui.run_memory_app
    memory._wants_tui = lambda args: True
    doctor.tui.run_memory_app = fake_run
    try:
        main(["memory", str(path)])
    finally:
        memory._wants_tui, doctor.tui.run_memory_app = saved
    return captured["load"], captured["session"]


async def measure_load(load, session, settle: float) -> tuple[Ticks, float]:
    """Ticks marked "start-up" until the loading screen is first painted, "loading" until the report
    is on the screen, then "showing" for `settle` s."""
    from doctor.tui.app import DoctorApp
    from doctor.tui.provider import CallableProvider
    from doctor.tui.screens.memory import MemoryScreen

    ticks = Ticks()

    class Timed(DoctorApp):
        CSS_PATH = str(ROOT / "doctor" / "tui" / "doctor.tcss")  # resolved against this module otherwise

        def on_mount(self) -> None:  # ticking before the screen (and its loader) starts
            # Textual runs DoctorApp.on_mount itself after this one (handlers run down the MRO):
            # calling super() here too pushed a second MemoryScreen with a second loader.
            self.set_interval(TICK, ticks.tick)
            ticks.mark("start-up")

    app = Timed(CallableProvider(load, session=session), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        started = ticks.marks[0][0]
        while not isinstance(app.screen, MemoryScreen):
            await asyncio.sleep(0.002)
        # "loading" from the first paint of the loading screen (CSS, compose and that paint are start-up)
        app.screen.call_after_refresh(ticks.mark, "loading")
        while not (isinstance(app.screen, MemoryScreen) and app.screen.report is not None):
            await asyncio.sleep(0.005)
        ticks.mark("showing")
        loaded = time.perf_counter() - started
        await pilot.pause(settle)
    return ticks, loaded


async def measure_pager(path: Path, presses: int) -> Ticks:
    """Ticks while the pager opens a giant line, pages right along it, and jumps near its end."""
    from textual.app import App

    from doctor.tui.screens.pager import PagerScreen
    from doctor.tui.widgets.pager_view import PagerView

    ticks = Ticks()

    class Host(App):
        def on_mount(self) -> None:
            self.set_interval(TICK, ticks.tick)
            ticks.mark("opening")
            self.push_screen(PagerScreen(str(path)))

    async with Host().run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        view = pilot.app.screen.query_one(PagerView)
        ticks.mark("paging")
        for _ in range(presses):
            await pilot.press("right")
            await pilot.pause(0.02)
        ticks.mark("jumping")
        await pilot.press("g", *f"1:{path.stat().st_size - 1000}", "enter")
        for _ in range(200):
            await pilot.pause(0.02)
            line = view.line(0)
            if line is not None and view.visible_chars(line, view.column, view.body_width()) is not None:
                break
        ticks.mark("after")
        await pilot.pause(0.3)
    return ticks


def row(name: str, phase: str, summary: dict) -> str:
    return (f"| {name} | {phase} | {summary['ticks']} | {summary['median_ms']:.1f} | {summary['p99_ms']:.1f} | "
            f"{summary['max_ms']:.1f} | {summary['over_budget']} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=50)
    parser.add_argument("--line-mb", type=int, default=200)
    parser.add_argument("--settle", type=float, default=4.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    lines = []
    with tempfile.TemporaryDirectory(prefix="doctor-bench-frames-") as tmp:
        dump = Path(tmp) / "session.jsonl"
        records = generate(dump, args.size_mb)
        load, session = capture_loader(dump)
        doctor_ticks, loaded = asyncio.run(measure_load(load, session, args.settle))
        report = load(lambda *args: None)  # built once more, outside any measurement

        def replay(progress):  # the baseline: the same wait and report, no work on any thread
            time.sleep(loaded)
            return report

        baseline_ticks, _ = asyncio.run(measure_load(replay, session, args.settle))

        giant = Path(tmp) / "giant.txt"
        with giant.open("wb") as handle:
            block = b"0123456789abcdef" * 4096
            for _ in range(args.line_mb * 16):
                handle.write(block)
        pager_ticks = asyncio.run(measure_pager(giant, presses=40))

    lines.append(f"TUI frame gaps, timer every {TICK * 1000:.0f} ms, budget {BUDGET_MS:.0f} ms, "
                 f"terminal {SIZE[0]}x{SIZE[1]}")
    lines.append(f"dump: {args.size_mb} MB synthetic Qwen recording ({records:,} records), "
                 f"report on screen after {loaded:.2f} s; pager: one {args.line_mb} MB line")
    lines.append("")
    lines.append("| run | phase | ticks | median gap ms | p99 ms | max ms | gaps > 50 ms |")
    lines.append("|---|---|---|---|---|---|---|")
    for name, ticks, phases in (
        ("baseline (loader only sleeps)", baseline_ticks, ("start-up", "loading", "showing")),
        (f"doctor, {args.size_mb} MB dump", doctor_ticks, ("start-up", "loading", "showing")),
        (f"pager, {args.line_mb} MB line", pager_ticks, ("opening", "paging", "jumping")),
    ):
        for phase in phases:
            lines.append(row(name, phase, ticks.summary(phase)))
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
