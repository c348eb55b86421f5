"""`doctor spill list|show|verify`: where a session's big outputs went, and whether they are intact.

`list` names every pointer and where it resolved; `verify` runs the audit and turns it
into an exit code (0 clean, 1 findings, 2 unreadable input); `show` pages one spill file
with read_file semantics (zero-based line offset and a line limit, or a regex filter).
Spill files hold arbitrary tool output, so `show` renders it inert: escape sequences are
dropped and control characters printed as visible `\\xNN` escapes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
from pathlib import Path

from doctor import exitcodes
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.retention import RetentionUnavailable
from doctor.report.inert import inert
from doctor.sources.base import LoadedSession, SourceError
from doctor.sources.registry import open_session
from doctor.spill.audit import audit_spill
from doctor.spill.errors import SpillFileError
from doctor.spill.line_index import scan_lines
from doctor.spill.pointers import SpillPointer, pointers_for
from doctor.spill.resolve import SpillLocator, agent_root, is_within

DEFAULT_LIMIT = 2000
# One tool output is often a single huge line: show its start, say how much was left out.
MAX_LINE_CHARS = 16_384



def register(subparsers) -> None:
    parser = subparsers.add_parser("spill", help="list, show and verify a session's spill files")
    commands = parser.add_subparsers(dest="spill_command", metavar="ACTION", required=True)

    listing = commands.add_parser("list", help="every pointer in a session and where it resolves")
    listing.add_argument("path", type=Path, metavar="PATH")
    listing.add_argument("--json", action="store_true")
    _add_root_options(listing)
    listing.set_defaults(handler=run_list)

    show = commands.add_parser("show", help="print part of a spill file, inert")
    show.add_argument("file", type=Path, metavar="FILE")
    show.add_argument("--offset", type=_non_negative, default=0, help="first line, zero-based")
    show.add_argument("--limit", type=_positive, default=DEFAULT_LIMIT, help="lines to print")
    show.add_argument("--grep", metavar="RE", help="print only the lines matching RE (with their numbers)")
    _add_root_options(show)
    show.set_defaults(handler=run_show)

    verify = commands.add_parser("verify", help="audit the spill files: exit 0 clean, 1 findings, 2 bad input")
    verify.add_argument("path", type=Path, metavar="PATH")
    verify.add_argument("--json", action="store_true")
    _add_root_options(verify)
    verify.set_defaults(handler=run_verify)


def _add_root_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spill-root", dest="spill_roots", action="append", type=Path, default=[], metavar="DIR",
                        help="where copied spill files are (repeatable)")
    parser.add_argument("--allow-outside", action="store_true",
                        help="open files that resolve outside the agent's spill roots")


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be ≥ 0")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


# -- list / verify -------------------------------------------------------------------


def _load(path: Path) -> tuple[LoadedSession, list[SpillPointer]] | None:
    """The session and its pointers, or None after printing the one-line reason it cannot be read."""
    try:
        session = open_session(path)
        try:
            analysis = analyze_tool_result_retention(session.history(), ui_history=session.ui_history)
        except RetentionUnavailable:
            analysis = None  # the pointers in the file are still worth auditing
        return session, pointers_for(session, analysis)
    except SourceError as exc:
        print(f"doctor: {exc}", file=sys.stderr)
        return None


def _locator(session: LoadedSession, args) -> SpillLocator:
    return SpillLocator(session.path, spill_roots=args.spill_roots, session_roots=session.spill_roots)


def run_list(args) -> int:
    loaded = _load(args.path)
    if loaded is None:
        return exitcodes.USAGE_OR_INPUT
    session, pointers = loaded
    locator = _locator(session, args)
    resolutions = [locator.resolve(pointer) for pointer in pointers]
    if args.json:
        rows = [{**r.pointer.to_json(), "resolution": r.to_json()} for r in resolutions]
        print(json.dumps({"agent": session.agent, "sessionPath": str(session.path), "pointers": rows}, indent=2))
        return exitcodes.OK
    print(f"{len(pointers)} spill pointers in {session.path} ({session.agent})")
    for r in resolutions:
        where = "missing" if not r.exists else f"{r.found}{' (remapped)' if r.remapped else ''}"
        ordinal = "-" if r.pointer.ordinal is None else str(r.pointer.ordinal)
        print(f"  #{ordinal:>4} {r.pointer.kind:<22} {r.pointer.tool or '?':<18} {inert(r.pointer.written)}")
        print(f"        -> {inert(where)}")
    return exitcodes.OK


def run_verify(args) -> int:
    loaded = _load(args.path)
    if loaded is None:
        return exitcodes.USAGE_OR_INPUT
    session, pointers = loaded
    report = audit_spill(session, pointers, _locator(session, args), allow_outside=args.allow_outside)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.summary_line())
        for finding in report.findings:
            target = finding.path or (finding.pointer.written if finding.pointer else "")
            print(f"  {finding.severity:<7} {finding.kind:<20} {inert(target)}: {inert(finding.message)}")
    return exitcodes.OK if report.ok else exitcodes.FINDINGS


# -- show ------------------------------------------------------------------------------


def run_show(args) -> int:
    path = args.file
    real = Path(os.path.realpath(path))
    if not args.allow_outside and not _may_open(path, real, args.spill_roots):
        print(f"doctor: {path}: resolves to {real}, outside any agent spill directory or --spill-root; "
              "pass --allow-outside to open it", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    try:
        pattern = re.compile(args.grep) if args.grep is not None else None
    except re.error as exc:
        print(f"doctor: --grep {args.grep!r}: {exc}", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    try:
        for number, line in _lines(real, args.offset, None if pattern else args.limit):
            if pattern is None:
                print(inert(line))
            elif pattern.search(line):
                print(f"{number}: {inert(line)}")
    except SpillFileError as exc:
        print(f"doctor: {path}: {exc.reason}", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    return exitcodes.OK


def _may_open(path: Path, real: Path, spill_roots: list[Path]) -> bool:
    """Inside the agent directory its own path claims, or under a root the user named."""
    claimed = agent_root(os.path.abspath(path))
    roots = [*spill_roots, *([claimed] if claimed else [])]
    return any(is_within(real, Path(os.path.realpath(root))) for root in roots)


def _lines(path: Path, offset: int, limit: int | None):
    """(zero-based number, text) from line `offset`, at most `limit` lines; long lines are cut."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise SpillFileError(path, exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SpillFileError(path, "not a regular file")
        size = info.st_size
        skipped, position, _ = scan_lines(fd, 0, size, offset)
        number = offset
        while position < size and (limit is None or number < offset + limit) and skipped == offset:
            line, position = _read_line(fd, position, size)
            yield number, line
            number += 1
    finally:
        os.close(fd)


def _read_line(fd: int, start: int, size: int) -> tuple[str, int]:
    """One line from `start`, its text capped at MAX_LINE_CHARS; returns the next line's offset."""
    cap = MAX_LINE_CHARS * 4
    head = os.pread(fd, min(cap, size - start), start)
    end = head.find(b"\n")
    if end >= 0:
        return head[:end].decode("utf-8", "replace").rstrip("\r"), start + end + 1
    if start + len(head) >= size:
        return head.decode("utf-8", "replace"), size
    _, after, _ = scan_lines(fd, start + len(head), size, 1)
    next_start = after if after > start + len(head) else size
    text = head.decode("utf-8", "ignore")[:MAX_LINE_CHARS]
    left_out = next_start - start - len(text.encode("utf-8"))
    return f"{text}… [{left_out:,} more bytes on this line]", next_start

