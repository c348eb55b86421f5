"""The last line of defence: an unexpected error becomes one line and its own exit code, never a traceback.

Every problem doctor expects (unreadable files, bad JSON, usage) has its own message and code; what
reaches here is a bug. The user gets what failed and on which input, plus how to see the traceback
(`--debug`, anywhere on the command line before `--`), and scripts get `exitcodes.INTERNAL_ERROR`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from doctor import exitcodes

DEBUG_FLAG = "--debug"


def split_debug_flag(argv: list[str]) -> tuple[list[str], bool]:
    """argv without `--debug` (looked for before any `--`), and whether it was there."""
    end = argv.index("--") if "--" in argv else len(argv)
    kept = [arg for arg in argv[:end] if arg != DEBUG_FLAG] + argv[end:]
    return kept, len(kept) != len(argv)


def report(exc: BaseException, args, debug: bool) -> int:
    """Tell the user about `exc` (an error doctor did not expect) and return the exit code."""
    if isinstance(exc, KeyboardInterrupt):
        return exitcodes.INTERRUPTED
    if isinstance(exc, BrokenPipeError):  # `doctor memory … | head`: the reader left, say nothing
        _silence_stdout()
        return exitcodes.OK
    if debug:
        import traceback  # only here: every command imports this module, and traceback costs start-up

        traceback.print_exception(exc, file=sys.stderr)
    command = " ".join(filter(None, ("doctor", getattr(args, "command", None))))
    inputs = ", ".join(str(path) for path in _inputs(args))
    where = f" on {inputs}" if inputs else ""
    detail = str(exc).splitlines()[0] if str(exc) else ""
    hint = "" if debug else "; run again with --debug for the traceback"
    print(f"{command}: internal error{where}: {type(exc).__name__}{': ' + detail if detail else ''}{hint}",
          file=sys.stderr)
    return exitcodes.INTERNAL_ERROR


def _inputs(args) -> list[Path]:
    """The paths the command was given, whatever its argument names."""
    found = []
    for value in vars(args).values():
        values = value if isinstance(value, list | tuple) else [value]
        found += [item for item in values if isinstance(item, Path)]
    return found


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
