"""`doctor` command line: `doctor memory …`, `doctor sessions …`, `doctor spill …`, `doctor scan …`.

Each subcommand lives in `doctor/commands/<name>.py` with `register(subparsers)`
(adds its parser and sets `handler`) so this file stays a dispatcher. Usage
errors exit 2 (argparse's own convention); a bug exits 4 with one line (`--debug`: the
traceback); see `doctor.exitcodes` and `doctor.crash`.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

from doctor import __version__, crash

if TYPE_CHECKING:
    import argparse

COMMAND_MODULES = (
    "doctor.commands.memory",
    "doctor.commands.sessions",
    "doctor.commands.spill",
    "doctor.commands.scan",
    "doctor.commands.install",
    "doctor.commands.slash",
    "doctor.commands.hook",
    "doctor.commands.mcp",
    "doctor.commands.statusline",
    "doctor.commands.whatif",
)


# Commands whose module is not named after them.
COMMAND_ALIASES = {"uninstall": "doctor.commands.install"}
# Commands an agent runs after every turn or tool call. Their module's `plain_args(words)` reads
# the plain form the agent's settings hold (`doctor statusline claude`) without argparse, which
# with the gettext, locale and shutil it loads costs ~5 ms of a status line's start-up; any
# other form (a flag, --help, a typo) goes through the parser as usual.
PER_TURN_COMMANDS = ("statusline", "hook")


def _modules_for(argv: list[str]) -> tuple[str, ...]:
    """Only the named command's module when the first word names one: start-up matters for what
    agents call after every turn or tool (`doctor hook`, `doctor slash`); otherwise all of them."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    module = COMMAND_ALIASES.get(first) or f"doctor.commands.{first}"
    return (module,) if module in COMMAND_MODULES else COMMAND_MODULES


def build_parser(modules: tuple[str, ...] = COMMAND_MODULES) -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="doctor",
        description="Diagnostics for coding-agent sessions: what the history keeps, what it costs, where big outputs went.",
    )
    parser.add_argument("--version", action="version", version=f"doctor {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback (accepted anywhere on the command line)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command `args` came through: `doctor spill show`'s for `doctor spill show …`."""
    import argparse

    while True:
        commands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
        name = getattr(args, commands[0].dest, None) if commands else None
        if name not in (commands[0].choices if commands else {}):
            return parser
        parser = commands[0].choices[name]


def _plain_args(argv: list[str]):
    """The arguments of a per-turn command in its plain form, read without argparse; else None."""
    if not argv or argv[0] not in PER_TURN_COMMANDS:
        return None
    return importlib.import_module(f"doctor.commands.{argv[0]}").plain_args(argv[1:])


def main(argv: list[str] | None = None) -> int:
    own_process = argv is None  # the console script or `python -m doctor`; tests and hosts pass argv
    argv, debug = crash.split_debug_flag(sys.argv[1:] if argv is None else list(argv))
    args = _plain_args(argv)
    if args is None:
        parser = build_parser(_modules_for(argv))
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # argparse would blame the top-level parser and print its usage, not the command's
            command_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
        if not getattr(args, "handler", None):
            parser.print_help(sys.stderr)
            return 2
    try:
        return args.handler(args)
    except (Exception, KeyboardInterrupt) as exc:  # a bug, Ctrl-C or a closed pipe: never a traceback
        return crash.report(exc, args, debug)
    finally:
        if own_process and args.command in PER_TURN_COMMANDS:
            # The process ends now, and Python's last garbage collection would walk every object the
            # command loaded (~5 ms of a status line). Frozen, they are skipped; nothing these commands
            # leave open needs a collection to be released (their files are closed, stdout is flushed).
            import gc

            gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
