"""`doctor memory [PATH]`: what a session keeps in its history, what it costs, where big outputs went.

On a terminal with no format flag it opens the TUI; otherwise it prints a report
(text, JSON, Markdown or HTML). `--check` turns the regression alarm and the spill
audit into an exit code. Exit codes: see `doctor.exitcodes`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from doctor import exitcodes
from doctor.assemble import ReportOptions, report_for_session, scan_facts, with_spill_audit
from doctor.commands.arguments import positive_int
from doctor.commands.locate import locate as _locate
from doctor.commands.output import emit
from doctor.commands.read_progress import reading_progress
from doctor.config import load_budget_overrides
from doctor.core.budgets import parse_budget_value, parse_tool_budget_overrides
from doctor.core.settings import SettingsError
from doctor.report.audit_summary import AUDIT_CATEGORIES, category_counts
from doctor.report.model import PATH_STYLES, MemoryReport
from doctor.report.render import FORMATS, render
from doctor.sources.base import LoadedSession, SourceError
from doctor.sources.registry import open_session

FAIL_ON_CHOICES = ("oversized", "integrity", "privacy", "missing", "budget", "any")
DEFAULT_FAIL_ON = ("oversized", "integrity", "privacy")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "memory",
        help="tool-result retention of a session (Qwen Code's /doctor memory, and more)",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("path", nargs="?", type=Path, metavar="PATH",
                        help="session file (default: the newest session of the current directory)")
    output = parser.add_argument_group("output")
    output.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    output.add_argument("--format", choices=FORMATS, help="print a report in this format instead of opening the TUI")
    output.add_argument("--no-tui", action="store_true", help="print the text report even on a terminal")
    output.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the report to FILE (mode 0600)")
    output.add_argument("--top", type=positive_int, default=10, metavar="N", help="largest results to list (10)")
    output.add_argument("--paths", choices=PATH_STYLES, default="short",
                        help="how paths appear in reports: short (default), full, or hash")
    output.add_argument("--results", dest="scan_facts", action="store_true",
                        help="JSON: add every result's sizes (what `doctor scan` reads from a pasted report)")
    output.add_argument("--include-previews", action="store_true",
                        help="add bounded previews of the largest results, obvious secrets masked")
    source = parser.add_argument_group("which session")
    source.add_argument("--agent", help="qwen, claude, codex, gemini or dump: skip format sniffing")
    source.add_argument("--follow", action="store_true",
                        help="keep the report live while the agent writes the file (Ctrl-C stops)")
    source.add_argument("--session", metavar="ID", help="open the session with this id (with --agent)")
    source.add_argument("--spill-root", dest="spill_roots", action="append", type=Path, default=[], metavar="DIR",
                        help="where spill files live when the session was copied from another machine")
    budgets = parser.add_argument_group("budgets")
    budgets.add_argument("--budgets", choices=("agent", "qwen"), default="agent",
                         help="whose limits judge the results: the session's agent's own (default) or Qwen Code's, "
                              "for any session (to compare agents)")
    budgets.add_argument("--threshold", type=_budget, metavar="N",
                         help="tools.truncateToolOutputThreshold to assume (≤ 0 disables)")
    budgets.add_argument("--tool-budget", dest="tool_budgets", action="append", default=[], metavar="NAME=N",
                         help="override one tool's budget (repeatable; N may be inf)")
    budgets.add_argument("--settings", dest="settings_files", action="append", type=Path, default=[],
                         metavar="FILE", help="extra Qwen settings.json, applied last (repeatable)")
    check = parser.add_argument_group("checks")
    check.add_argument("--check", action="store_true", help="exit 1 when the alarm fires or the audit finds a problem")
    check.add_argument("--fail-on", default=",".join(DEFAULT_FAIL_ON), metavar="LIST",
                       help=f"what --check fails on: comma-separated from {', '.join(FAIL_ON_CHOICES)}")
    process = parser.add_argument_group("process memory")
    process.add_argument("--self", dest="self_process", action="store_true",
                         help="add doctor's own Python process diagnostics")
    process.add_argument("--sample", action="store_true", help="three process samples one second apart")
    process.add_argument("--snapshot", action="store_true", help="write a tracemalloc snapshot (may hold sensitive data)")
    process.add_argument("--deep", action="store_true", help="deep size of the history held in memory, and a type summary (pympler; slow)")
    process.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="diff two tracemalloc snapshots")
    parser.set_defaults(handler=run)


def _budget(text: str) -> float:
    try:
        return parse_budget_value(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _fail(message: str, code: int = exitcodes.USAGE_OR_INPUT) -> int:
    print(f"doctor memory: {message}", file=sys.stderr)
    return code


def _fail_on(text: str) -> set[str]:
    chosen = {item.strip() for item in text.split(",") if item.strip()}
    unknown = chosen - set(FAIL_ON_CHOICES)
    if unknown:
        raise ValueError(f"--fail-on: unknown {', '.join(sorted(unknown))} (choose from {', '.join(FAIL_ON_CHOICES)})")
    return set(FAIL_ON_CHOICES) - {"any"} if "any" in chosen else chosen


def run(args) -> int:
    if args.compare:
        from doctor.commands.memory_process import compare_snapshots_command

        return compare_snapshots_command(*args.compare)
    try:
        fail_on = _fail_on(args.fail_on)
        overrides = {**load_budget_overrides(), **parse_tool_budget_overrides(args.tool_budgets)}
    except ValueError as exc:
        return _fail(str(exc))
    options = ReportOptions(
        settings_files=tuple(args.settings_files),
        threshold=args.threshold,
        tool_budgets=overrides,
        top=args.top,
        path_style=args.paths,
        budgets=args.budgets,
    )
    try:
        if args.follow:
            from doctor.live.follow import follow_command

            return follow_command(_locate(args), args.agent, lambda session: _build(session, options, args),
                                  fmt=args.format or "text", tui=_wants_tui(args))
        path = _locate(args)
        with reading_progress(path):
            session = open_session(path, agent=args.agent)
    except SourceError as exc:
        return _fail(str(exc))
    if _wants_tui(args):
        return _run_tui(session, options, args, fail_on)
    try:
        with reading_progress(path):
            report = _build(session, options, args)
    except SettingsError as exc:
        return _fail(str(exc))
    text = render(report, args.format or "text", include_previews=args.include_previews, session=session)
    failed = emit(text, args.output)
    if failed:
        return _fail(failed)
    return _exit_code(report, args, fail_on)


def _run_tui(session: LoadedSession, options: ReportOptions, args, fail_on: set[str]) -> int:
    """The TUI builds the report on a worker thread behind a progress bar; errors show on screen."""
    from doctor.tui import run_memory_app

    built: list[MemoryReport] = []

    def load(progress) -> MemoryReport:
        progress(None, f"Reading {session.path.name if session.path else 'the session'} and measuring every result…")
        report = _build(session, options, args,
                        measured=lambda early: progress(0.8, "Auditing the spill files…", report=early))
        built.append(report)
        progress(1.0, "ready")
        return report

    run_memory_app(load=load, session=session, options=options)
    return _exit_code(built[0], args, fail_on) if built else exitcodes.OK


def _build(session: LoadedSession, options: ReportOptions, args, *, measured=None) -> MemoryReport:
    """The report; `measured(report)` is handed it as soon as the figures are known, before the spill audit."""
    report = report_for_session(session, options, process=_process(args, session))
    if measured is not None:
        measured(report)
    report = with_spill_audit(session, report, args.spill_roots)
    # The agent version, project hash, size and records are in every JSON report, so a report pasted
    # without --results still tells `doctor scan` which version ran; --results adds every result's row.
    facts = scan_facts(session)
    report = replace(report, scan_facts=facts) if getattr(args, "scan_facts", False) else \
        replace(report, source_facts=facts)
    return report


def _process(args, session: LoadedSession):
    if not (args.self_process or args.sample or args.snapshot or args.deep):
        return None
    from doctor.commands.memory_process import collect_for_command

    return collect_for_command(args, session)


def _wants_tui(args) -> bool:
    if args.format or args.no_tui or args.output or args.check:
        return False
    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        return False
    try:
        import doctor.tui.app  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def _exit_code(report: MemoryReport, args, fail_on: set[str]) -> int:
    failures = _check_failures(report, fail_on) if args.check else []
    if failures:
        print(f"doctor memory: check failed: {', '.join(failures)}", file=sys.stderr)
        return exitcodes.FINDINGS
    if any(issue.severity == "warning" for issue in report.issues):
        return exitcodes.PARTIAL_INPUT
    return exitcodes.OK


def _check_failures(report: MemoryReport, fail_on: set[str]) -> list[str]:
    """Why --check fails, one entry per reason (empty when it passes)."""
    reasons = []
    if "oversized" in fail_on and report.qwen_stats and report.qwen_stats.oversized_result_count > 0:
        reasons.append("oversized")
    if report.spill is not None:
        counts = category_counts(report.spill)
        reasons.extend(category for category in AUDIT_CATEGORIES if category in fail_on and counts[category])
    return reasons
