"""`doctor whatif [PATH] --set KEY=VALUE`: the session replayed under other limits, exactly.

KEY is the agent's own name for a limit (Qwen Code: `tools.truncateToolOutputThreshold`, …); VALUE
`default` means "as if the key were not set". `--sweep KEY=A..B[:STEP]` (or `KEY=V1,V2,…`) replays once
per value; `--recommend` proposes per-tool budgets. Prints text, JSON, Markdown or HTML like
`doctor memory`. Exit codes: 0; 2 usage, unreadable input or an agent doctor cannot replay; 3 the
answer rendered but part of the input was skipped; 4 internal error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from doctor import exitcodes
from doctor.commands.arguments import positive_int
from doctor.commands.output import emit
from doctor.core.settings import SettingsError
from doctor.report.model import PATH_STYLES
from doctor.report.render import FORMATS
from doctor.sources.base import SourceError

DEFAULT_KEEP = 0.9


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "whatif", help="replay a session under other limits: what each result would have put in the context",
        description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, metavar="PATH",
                        help="session file (default: the newest session of the current directory)")
    replay = parser.add_argument_group("what to replay")
    replay.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="a limit under the agent's own name (repeatable); VALUE `default` unsets it")
    replay.add_argument("--sweep", metavar="KEY=A..B[:STEP]",
                        help="one replay per value: a range (20 values when STEP is left out) or a list V1,V2,…")
    replay.add_argument("--recommend", action="store_true",
                        help="per tool, the smallest budget that keeps --keep of its results whole, and what it saves")
    replay.add_argument("--keep", type=_share, default=DEFAULT_KEEP, metavar="SHARE",
                        help=f"share of results --recommend keeps whole (default {DEFAULT_KEEP})")
    output = parser.add_argument_group("output")
    output.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    output.add_argument("--format", choices=FORMATS, help="text (default), json, markdown or html")
    output.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the answer to FILE (mode 0600)")
    output.add_argument("--top", type=positive_int, default=10, metavar="N", help="largest results in before/after (10)")
    output.add_argument("--paths", choices=PATH_STYLES, default="short", help="how paths appear: short, full or hash")
    source = parser.add_argument_group("which session")
    source.add_argument("--agent", help="qwen, claude, codex or gemini: skip format sniffing")
    source.add_argument("--session", metavar="ID", help="open the session with this id (with --agent)")
    source.add_argument("--spill-root", dest="spill_roots", action="append", type=Path, default=[], metavar="DIR",
                        help="where spill files live when the session was copied from another machine")
    source.add_argument("--settings", dest="settings_files", action="append", type=Path, default=[], metavar="FILE",
                        help="the agent's settings the session ran with, applied after the usual files (repeatable)")
    parser.set_defaults(handler=run)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a share above 0 and at most 1, not {text!r}")
    return value


def _fail(message: str, code: int = exitcodes.USAGE_OR_INPUT) -> int:
    print(f"doctor whatif: {message}", file=sys.stderr)
    return code


def run(args) -> int:
    from doctor.assemble import ReportOptions
    from doctor.commands.locate import locate
    from doctor.commands.read_progress import reading_progress
    from doctor.sources.registry import open_session
    from doctor.whatif.keys import SettingError, parse_sets, parse_sweep
    from doctor.whatif.replay import UnsupportedAgent, agent_module, prepare

    if args.sweep and args.recommend:
        return _fail("--sweep and --recommend are separate questions; ask one at a time")
    try:
        path = locate(args)
        with reading_progress(path):
            session = open_session(path, agent=args.agent)
        module = agent_module(session.agent)
        overrides = parse_sets(args.sets, module.KEYS, f"{module.CLIENT} {module.VERSION}")
        sweep = parse_sweep(args.sweep, module.KEYS, f"{module.CLIENT} {module.VERSION}") if args.sweep else None
    except (SourceError, UnsupportedAgent, SettingError) as exc:
        return _fail(str(exc))
    options = ReportOptions(settings_files=tuple(args.settings_files), top=args.top, path_style=args.paths)
    try:
        with reading_progress(path):
            prepared = prepare(session, options, spill_roots=args.spill_roots)
            answer = _answer(prepared, overrides, sweep, args)
    except SettingsError as exc:
        return _fail(str(exc))
    failed = emit(_render(answer, args.format or "text"), args.output)
    if failed:
        return _fail(failed)
    issues = prepared.before.issues
    return exitcodes.PARTIAL_INPUT if any(issue.severity == "warning" for issue in issues) else exitcodes.OK


def _answer(prepared, overrides, sweep, args):
    if sweep is not None:
        from doctor.whatif.sweep import run_sweep

        key, values = sweep
        return run_sweep(prepared, overrides, key.name, values)
    if args.recommend:
        from doctor.whatif.recommend import recommend

        return recommend(prepared, overrides, args.keep)
    return prepared.replay(overrides)


def _render(answer, fmt: str) -> str | bytes:
    if fmt == "json":
        from doctor.whatif.result import whatif_json_output

        return whatif_json_output(answer.to_dict())
    from doctor.report import whatif as sections

    from doctor.report.documents import render_document

    title, body = sections.document(answer)
    return render_document(title, body, fmt)
