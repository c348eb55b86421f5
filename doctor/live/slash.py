"""`/doctor memory` as a slash command inside a Python agent host.

A host that typed-command-dispatches calls `handle(line, session)` and shows the
returned `SlashResult` the way it shows its own messages. The grammar, the
unknown-argument message and the message kinds are Qwen Code 0.24.4's
(`memoryDoctorAction`, chunk-KYFJLESB.js): tokens split on whitespace, only
`--json`, `--sample` and `--snapshot` accepted, "warning" when the process shows
a leak risk. As in Qwen, `--sample` and `--snapshot` take the long text path, on
which `--json` is ignored and the kind is "info" unless the snapshot failed.

In an interactive host plain `/doctor memory` opens the TUI instead of
returning a report: a Textual host passes its running `app` and gets the doctor
pushed as a screen; any other host gets a full-screen app that returns when the
user quits. Process diagnostics describe the current process: the host's.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.live import LiveSession
from doctor.live.summary import summary_line
from doctor.process import (
    SnapshotRefused,
    collect_process_diagnostics,
    take_samples,
    write_tracemalloc_snapshot,
)
from doctor.report.model import MemoryReport
from doctor.report.render import render

COMMAND = "/doctor"
SUBCOMMAND = "memory"
FLAGS = ("--json", "--sample", "--snapshot")
MEMORY_USAGE_HINT = "/doctor memory [--json] [--sample] [--snapshot]"

INFO, WARNING, ERROR = "info", "warning", "error"


@dataclass(frozen=True)
class SlashResult:
    """What the host shows: `text` as a message of `kind` (info, warning or error)."""

    text: str
    kind: str = INFO


def handle(command_line: str, session: LiveSession, *, interactive: bool = False, app=None) -> SlashResult:
    """Run one `/doctor …` command line typed by the user against the attached `session`."""
    tokens = command_line.split()
    if not tokens or tokens[0] != COMMAND:
        return SlashResult(f"Not a doctor command: {command_line.strip()!r}. Usage: {MEMORY_USAGE_HINT}", ERROR)
    if len(tokens) == 1:
        return SlashResult(f"Usage: {MEMORY_USAGE_HINT}")
    if tokens[1] != SUBCOMMAND:
        return SlashResult(f"Unknown doctor subcommand: {tokens[1]}. Usage: {MEMORY_USAGE_HINT}", ERROR)
    return memory(tokens[2:], session, interactive=interactive, app=app)


def memory(tokens: list[str], session: LiveSession, *, interactive: bool = False, app=None) -> SlashResult:
    """`/doctor memory` with its argument tokens already split."""
    unknown = [token for token in tokens if token not in FLAGS]
    if unknown:
        return SlashResult(f"Unknown argument(s): {', '.join(unknown)}. Usage: {MEMORY_USAGE_HINT}", ERROR)
    if "--sample" in tokens or "--snapshot" in tokens:
        return _long_report(session, sample="--sample" in tokens, snapshot="--snapshot" in tokens)
    if interactive and "--json" not in tokens:
        return _open_tui(session, app)
    report = session.report(process=collect_process_diagnostics(history=session.history()))
    return SlashResult(render(report, "json" if "--json" in tokens else "text").rstrip("\n"), _kind(report))


def _long_report(session: LiveSession, *, sample: bool, snapshot: bool) -> SlashResult:
    """Qwen's `--sample` / `--snapshot` path: the report, then the snapshot's outcome."""
    samples = take_samples() if sample else None
    report = session.report(process=collect_process_diagnostics(history=session.history(), samples=samples))
    text = render(report, "text").rstrip("\n")
    if not snapshot:
        return SlashResult(text)
    try:
        written = write_tracemalloc_snapshot()
    except SnapshotRefused as exc:
        message = str(exc)
        prefix = "" if message.startswith("Heap snapshot") else "Heap snapshot failed: "
        return SlashResult(f"{text}\n\n{prefix}{message}", ERROR)
    lines = [f"Heap snapshot written: {written.path}", *([written.note] if written.note else []), written.warning]
    return SlashResult(f"{text}\n\n" + "\n".join(lines))


def _open_tui(session: LiveSession, app) -> SlashResult:
    """Push the doctor screen onto a running Textual `app`, or run the doctor app until the user quits."""
    from doctor.live.provider import LiveSessionProvider

    provider = LiveSessionProvider(session)
    try:
        if app is not None:
            from doctor.tui.screens import MemoryScreen

            app.push_screen(MemoryScreen(provider))
            return SlashResult("doctor memory opened")
        import doctor.tui.app  # noqa: F401  (is textual installed?)
    except ImportError as exc:
        report = provider.load()
        return SlashResult(f"{render(report, 'text').rstrip()}\n\n(TUI unavailable: {exc})", _kind(report))
    from doctor.tui import run_memory_app

    run_memory_app(provider=provider)
    return SlashResult(f"doctor memory closed: {summary_line(provider.last_report)}")


def _kind(report: MemoryReport) -> str:
    return WARNING if report.process is not None and report.process.analysis.risks else INFO

