"""`doctor slash AGENT [--session ID] [--args=ARGS]`: what `/doctor:memory` runs inside an agent.

The command files `doctor install` writes call this; its stdout joins the model's context, so it
prints the compact summary (`doctor.report.compact`) and writes the full text report, 0600, to
doctor's private cache folder (`doctor.safety.private_folders`), naming the file. ARGS are what the user typed after `/doctor:memory`
(`--top N`, `--paths short|full|hash`), as the one word the command file quotes; never beside
`--transcript`, which an agent's rule allowing the command file's form must not let through. A session whose
transcript does not exist yet (its first prompt) gets one short line and exit 0.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

from doctor import exitcodes
from doctor.integrations import AGENTS, typed_command
from doctor.report.model import PATH_STYLES

USAGE = "/doctor:memory [--top N] [--paths short|full|hash]"
REPORTS = "reports"  # under <user cache dir>/doctor


def register(subparsers) -> None:
    parser = subparsers.add_parser("slash", help="what /doctor:memory runs inside an agent (compact summary)",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("agent", choices=AGENTS)
    parser.add_argument("--session", metavar="ID", help="the agent's session id (default: from the environment "
                        "where the agent sets one, else the newest session of this directory)")
    parser.add_argument("--transcript", type=Path, metavar="FILE", help="the session file itself")
    parser.add_argument("--args", dest="typed", action="append", default=[], metavar="ARGS",
                        help=f"what the user typed after the command: {USAGE}")
    parser.set_defaults(handler=run)


def user_options(typed: list[str]) -> argparse.Namespace:
    """The user's arguments; raises ValueError with a one-line message."""
    words = [word for text in typed for word in shlex.split(text)]
    parser = argparse.ArgumentParser(prog="/doctor:memory", add_help=False, exit_on_error=False)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--paths", choices=PATH_STYLES, default="short")
    try:
        options, unknown = parser.parse_known_args(words)
    except argparse.ArgumentError as exc:
        raise ValueError(str(exc)) from None
    if unknown:
        raise ValueError(f"unknown argument(s): {' '.join(unknown)}")
    if not 1 <= options.top <= 50:
        raise ValueError("--top takes 1 to 50")
    return options


def run(args) -> int:
    from doctor.integrations.relay import relayed

    if args.typed and args.transcript is not None:
        # The agents' permission rules run `doctor slash AGENT --args=…` unasked (the command files' form);
        # a word after it must not make that a read of any file the model names.
        print("doctor slash: --transcript is not taken with --args (the form /doctor:memory runs); "
              "use `doctor memory FILE` for a file", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    text, code = compose(args.agent, args.session, args.transcript, args.typed)
    sys.stdout.write(relayed(text))  # it joins the model's context, and the agent may show it: inert
    return code


def compose(agent: str, session_id: str | None, transcript: Path | None, typed: list[str],
            cwd: Path | None = None) -> tuple[str, int]:
    """What `/doctor:memory` answers (the summary, or one line saying why not) and the exit code."""
    from doctor.integrations.session import locate

    cwd = cwd or Path.cwd()
    try:
        options = user_options(typed)
    except ValueError as exc:
        return f"doctor: {exc}. Usage: {USAGE}\n", exitcodes.USAGE_OR_INPUT
    found = locate(agent, session_id, cwd, transcript=transcript)
    if not found.known:
        return ("doctor: cannot tell which session this is: doctor's SessionStart hook has not recorded it "
                f"(start a new session after `doctor install {agent}`); not describing another session.\n"), exitcodes.OK
    if found.path is None:
        if found.session_id:
            return (f"doctor: session {found.session_id} has no transcript yet (its first prompt); "
                    f"run {typed_command(agent)} again after a turn.\n"), exitcodes.OK
        return f"doctor: no {agent} session found for {cwd} yet.\n", exitcodes.OK
    return summary(found.path, agent, options.top, options.paths)


def summary(path: Path, agent: str | None = None, top: int = 3, paths: str = "short") -> tuple[str, int]:
    """The compact summary of one session file (also `doctor mcp`'s `memory_report`) and the exit code;
    the full text report goes to a 0600 file it names. `agent` None: the first reader that knows the file."""
    from dataclasses import replace

    from doctor.assemble import ReportOptions, report_with_spill_audit
    from doctor.config import load_budget_overrides
    from doctor.report.compact import render_compact
    from doctor.report.render import render
    from doctor.sources.base import SourceError
    from doctor.sources.registry import open_session

    try:
        session = open_session(path, agent=agent)
        report = report_with_spill_audit(session, ReportOptions(tool_budgets=load_budget_overrides(),
                                                                path_style=paths))
    except (SourceError, ValueError) as exc:
        return f"doctor: {exc}\n", exitcodes.USAGE_OR_INPUT
    if report.context_window is None:  # Claude Code, Qwen Code: the window their status line was told
        from doctor.statusline.window import recall

        report = replace(report, context_window=recall(session.agent, path))
    full = write_report(session.agent, report.source.session_id or path.stem, render(report, "text", session=session))
    text = render_compact(replace(report, top=top), str(full) if full else None, top)
    return text, exitcodes.PARTIAL_INPUT if any(issue.severity == "warning" for issue in report.issues) else exitcodes.OK


def write_report(agent: str, session_id: str, text: str) -> Path | None:
    """Write the full report to `<cache>/doctor/reports/AGENT-SESSION.txt` (0600, replaced in one step)
    and name it; None, said on stderr, when it could not be: the folder is not private (another
    user's, a symlink) or the write failed."""
    from doctor.safety.private_folders import private_cache_folder

    folder = private_cache_folder(REPORTS)
    if folder is None:
        return None
    name = report_name(agent, session_id)
    with folder:
        try:
            folder.write(name, text.encode("utf-8", "backslashreplace"))
        except OSError as exc:
            print(f"doctor: could not write the full report to {folder.path / name}: {exc.strerror or exc}",
                  file=sys.stderr)
            return None
    return folder.path / name


def report_name(agent: str, session_id: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:120]
    return f"{agent}-{safe}.txt"
