"""`doctor spill list|show|verify`: where a session's big outputs went, and whether they are intact.

`list` names every pointer and where it resolved; `verify` runs the audit and turns it
into an exit code (0 clean, 1 findings, 2 unreadable input); `show` pages one spill file
with read_file semantics (zero-based line offset and a line limit, or a regex filter whose
matches are numbered from 1, as `grep -n` and the TUI pager number lines)
through the same engine as the TUI pager (`doctor.spill.pager.Pager`): bounded memory
whatever the file, binary files as hex rows.
Spill files hold arbitrary tool output, so `show` renders it inert: escape sequences are
dropped and control characters printed as visible `\\xNN` escapes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from doctor import exitcodes
from doctor.commands.arguments import non_negative_int, positive_int
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.retention import RetentionUnavailable
from doctor.report.inert import inert, inert_line
from doctor.safety.reads import open_regular
from doctor.safety.roots import Root, locate, open_contained, spill_roots
from doctor.sources.base import LoadedSession, SourceError
from doctor.sources.registry import open_session
from doctor.spill.audit import audit_spill
from doctor.spill.errors import SpillFileError
from doctor.spill.pager import HEX_ROW_BYTES, Pager
from doctor.spill.pointers import SpillPointer, pointers_for
from doctor.spill.resolve import SpillLocator

DEFAULT_LIMIT = 2000
# One tool output is often a single huge line: show its start, say how much was left out.
MAX_LINE_CHARS = 16_384
PAGE_LINES = 256  # lines read per engine call: output streams, memory stays bounded
GREP_CONTEXT = 80  # chars shown either side of a match deep inside a long line


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
    show.add_argument("--offset", type=non_negative_int, default=0, help="first line, zero-based")
    show.add_argument("--limit", type=positive_int, default=DEFAULT_LIMIT, help="lines to print")
    show.add_argument("--grep", metavar="RE",
                      help="print only the lines matching RE, with their line numbers (from 1, as grep -n)")
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


# -- list / verify -------------------------------------------------------------------


def _load(path: Path) -> tuple[LoadedSession, list[SpillPointer]] | None:
    """The session and its pointers, or None after printing the one-line reason it cannot be read."""
    try:
        session = open_session(path)
        try:
            analysis = analyze_tool_result_retention(session.history_to_measure(), ui_history=session.ui_history_to_measure())
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


class ShowRefused(Exception):
    """Why a spill file cannot be shown: one line, already naming the file (or the bad option).

    `outside`: refused only for lying outside the allowed folders; the caller says how to allow
    it in its own terms (`--allow-outside` here, `--spill-root` for `doctor mcp`)."""

    def __init__(self, message: str, *, outside: bool = False):
        super().__init__(message)
        self.outside = outside


OUTSIDE_HINT = "pass --allow-outside to open it"


def run_show(args) -> int:
    if not os.path.lexists(args.file):  # the user's own terminal: say so before the folder rules
        print(f"doctor: {inert_line(args.file)}: no such file", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    try:
        for row in show_rows(args.file, args.offset, args.limit, grep=args.grep,
                             roots=spill_roots(os.environ, args.spill_roots), allow_outside=args.allow_outside):
            print(row)
    except ShowRefused as exc:
        print(f"doctor: {exc}" + (f"; {OUTSIDE_HINT}" if exc.outside else ""), file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    return exitcodes.OK


def show_rows(path: Path, offset: int, limit: int, *, grep: str | None = None, roots: tuple[Root, ...] = (),
              allow_outside: bool = False) -> Iterator[str]:
    """The rows `doctor spill show` prints (also what `doctor mcp`'s `read_spilled` pages), inert.

    Containment first (`doctor.safety`): the file must be one the agents write as spilled output
    under one of `roots` (fixed when the command started), reached with no symlink below `/`,
    a regular file; `allow_outside` (the user's own choice on the command line) opens any
    regular file instead. Raises ShowRefused, before the first row or when `offset` is past the end.
    """
    path = Path(path)
    opener = _opener(path, roots, allow_outside)
    try:
        pattern = re.compile(grep) if grep is not None else None
    except re.error as exc:
        raise ShowRefused(f"--grep {grep!r}: {exc}") from None
    try:
        with Pager(path, index=False, opener=opener) as pager:
            if pattern is not None:
                rows = _grep(pager, grep, offset)
            elif pager.is_binary:
                rows = _hex_rows(pager, offset, limit)
            else:
                rows = _lines(pager, offset, limit)
            printed = 0
            for row in rows:
                yield row
                printed += 1
            if not printed and pattern is None and offset > 0:
                raise ShowRefused(_past_the_end(path, pager, offset))
    except SpillFileError as exc:
        raise ShowRefused(f"{_shown(path)}: {exc.reason}") from None
    except OSError as exc:
        raise ShowRefused(f"{_shown(path)}: {exc.strerror or exc}") from None


def _opener(path: Path, roots: tuple[Root, ...], allow_outside: bool) -> Callable[[], int]:
    """How to open `path`: beneath its root (`doctor.safety`), or as any regular file when the user allows it."""
    if allow_outside:
        return lambda: open_regular(path)
    located = locate(path, roots)
    if located is None:
        raise ShowRefused(f"{_shown(path)}: not a spill file (only the files the agents write as spilled output "
                          "under their own folders, or under a --spill-root, are shown)", outside=True)
    return lambda: open_contained(located)


def _shown(path: Path | str) -> str:
    """A path as a message repeats it: inert, one line, at most 300 chars (it may come from a model)."""
    line = inert_line(os.fspath(path))
    return line if len(line) <= 300 else line[:300] + "…"


def _past_the_end(path: Path, pager: Pager, offset: int) -> str:
    """`--offset` beyond the last line (or hex row): say how far the file goes instead of printing nothing."""
    if pager.is_binary:
        count, unit = -(-pager.size // HEX_ROW_BYTES), "rows"
    else:
        count, unit = _count_lines(pager), "lines"
    offsets = f"offsets 0 to {count - 1}" if count else "it is empty"
    return f"{_shown(path)}: --offset {offset} is past the end: the file has {count:,} {unit} ({offsets})"


def _count_lines(pager: Pager) -> int:
    """Lines as `page` counts them (the last needs no newline), by doubling then halving `byte_of_line`."""
    low, high = 0, 1
    while pager.byte_of_line(high) is not None:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if pager.byte_of_line(middle) is not None else (low, middle)
    return high if pager.byte_of_line(low) is not None else 0


def _lines(pager: Pager, offset: int, limit: int) -> Iterator[str]:
    """Lines `offset` … `offset + limit - 1` (read_file semantics), inert; a long line shows its start."""
    number, end = offset, offset + limit
    while number < end:
        page = pager.page(number, min(PAGE_LINES, end - number), max_line_chars=MAX_LINE_CHARS)
        for index, line in enumerate(page):
            text = inert(line.text)
            if line.truncated:
                following = (page[index + 1].byte_offset - 1 if index + 1 < len(page)
                             else _line_end(pager, line.number))  # where its newline is
                left_out = following - line.byte_offset - len(line.text.encode("utf-8"))
                text += f"… [{left_out:,} more bytes on this line]"
            yield text
        if len(page) < min(PAGE_LINES, end - number):
            return
        number += len(page)


def _line_end(pager: Pager, number: int) -> int:
    after = pager.byte_of_line(number + 1)
    return pager.size if after is None else after - 1


def _grep(pager: Pager, expression: str, offset: int) -> Iterator[str]:
    """`N: line` for each line from `offset` on with a match (N from 1), streaming (a 1 GB line included).

    A match shows the line's start; one beyond `MAX_LINE_CHARS` shows the text around it
    and its char position. Matches that would span a newline do not count (lines are
    matched one at a time, as grep does).
    """
    start = (offset, 0)
    while True:
        match = pager.search(expression, regex=True, start=start)
        if match is None:
            return
        if match.length and len(pager.char_window(match.line, match.char, match.length)) < match.length:
            start = (match.line, match.char + 1)  # crossed a line end: look further along this line
            continue
        if match.char + match.length <= MAX_LINE_CHARS:
            yield f"{match.line + 1}: {inert(pager.page(match.line, 1, max_line_chars=MAX_LINE_CHARS)[0].text)}"
        else:
            context = max(0, match.char - GREP_CONTEXT)
            window = pager.char_window(match.line, context, match.length + 2 * GREP_CONTEXT)
            yield f"{match.line + 1}: …[char {match.char:,}] {inert(window)}…"
        start = (match.line + 1, 0)


def _hex_rows(pager: Pager, offset: int, limit: int) -> Iterator[str]:
    """A binary file as hexdump rows of 16 bytes; `--offset`/`--limit` count rows."""
    row, end = offset, offset + limit
    while row < end and row * HEX_ROW_BYTES < pager.size:
        count = min(PAGE_LINES, end - row)
        yield from pager.hex_page(row * HEX_ROW_BYTES, count * HEX_ROW_BYTES)
        row += count
