"""`doctor sessions`: which agent sessions this machine holds, newest first.

Listing is stat-only (`doctor.sources.discovery`); the tool-result columns
need each listed session read and analysed, so they are computed for the
listed rows only and skipped with `--fast`. `session_rows` is the data side
(plain values, no rendering); the table and JSON writers only format it.
Sessions hold tool output, so nothing taken from a file is printed except
names, paths and numbers, with control characters replaced.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from doctor import exitcodes
from doctor.commands.arguments import non_negative_int
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.retention import RetentionUnavailable
from doctor.sources.base import SourceError
from doctor.sources.discovery import AGENTS, SessionRef, find_sessions
from doctor.sources.registry import open_session

COLUMNS = ("agent", "project", "id", "started", "size", "tool_results", "retained_chars")


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One listed session with its retention figures (None when skipped or unreadable)."""

    agent: str
    project: str | None
    id: str
    path: str
    started: str | None
    size: int
    tool_results: int | None = None
    retained_chars: float | None = None
    problem: str | None = None


def register(subparsers) -> None:
    parser = subparsers.add_parser("sessions", help="list agent sessions on this machine, newest first")
    parser.add_argument("--agent", choices=AGENTS, help="only this agent's sessions")
    parser.add_argument("--project", metavar="DIR", help="only sessions that ran in DIR")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--limit", type=non_negative_int, default=20, metavar="N", help="list at most N sessions (default 20; 0 = all)")
    parser.add_argument("--fast", action="store_true", help="do not read sessions (no tool-result columns)")
    parser.set_defaults(handler=run)


def session_rows(refs: list[SessionRef], *, measure: bool = True) -> list[SessionRow]:
    """Rows for `refs`, reading and analysing each session when `measure` is set."""
    return [_row(ref, measure) for ref in refs]


def _row(ref: SessionRef, measure: bool) -> SessionRow:
    row = SessionRow(ref.agent, ref.project, ref.id, str(ref.path), ref.started, ref.size)
    if not measure:
        return row
    try:
        session = open_session(ref.path, agent=ref.agent)
        stats = analyze_tool_result_retention(session.history_to_measure(), ui_history=session.ui_history_to_measure()).stats
    except SourceError as exc:
        return replace(row, problem=str(exc))
    except RetentionUnavailable as exc:
        return replace(row, problem=f"{ref.path}: retention unavailable: {exc}")
    return replace(row, tool_results=stats.tool_result_count, retained_chars=stats.total_chars)


def run(args: argparse.Namespace) -> int:
    project = Path(args.project) if args.project else None
    refs = find_sessions(agent=args.agent, project=project)
    if args.limit:
        refs = refs[: args.limit]
    rows = session_rows(refs, measure=not args.fast)
    if args.json:
        print(json.dumps([asdict(row) for row in rows], indent=1))
    else:
        print(render_table(rows))
    problems = [row.problem for row in rows if row.problem]
    for problem in problems:
        print(f"doctor sessions: {inert(problem)}", file=sys.stderr)
    return exitcodes.PARTIAL_INPUT if problems else exitcodes.OK


def inert(text: str) -> str:
    """Control characters (ANSI escapes, newlines) shown as `?` so a cell cannot drive the terminal."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _cell(row: SessionRow, column: str) -> str:
    value = getattr(row, column)
    if value is None:
        return "-" if row.problem is None or column not in ("tool_results", "retained_chars") else "error"
    if column in ("size", "retained_chars", "tool_results"):
        return f"{value:,.0f}"
    return inert(str(value))


def render_table(rows: list[SessionRow]) -> str:
    """A plain text table, numbers right-aligned."""
    if not rows:
        return "No sessions found."
    header = [column.replace("_", " ") for column in COLUMNS]
    cells = [[_cell(row, column) for column in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in [header, *cells]) for i in range(len(COLUMNS))]
    numeric = {"size", "tool_results", "retained_chars"}

    def line(values: list[str]) -> str:
        return "  ".join(
            value.rjust(width) if column in numeric else value.ljust(width)
            for value, width, column in zip(values, widths, COLUMNS)
        ).rstrip()

    return "\n".join([line(header), *(line(values) for values in cells)])
