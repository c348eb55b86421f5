"""Which `doctor` the agents run: the absolute path of the one that ran `doctor install`.

An agent runs its hooks, status line and command files with its own environment, which often lacks
the user's virtualenv or pipx folder on PATH: a bare `doctor hook claude` then fails after every
tool call ("doctor: not found"). So install writes the doctor that is running it, by absolute path
(not resolved through links, so a pipx or venv upgrade in place keeps working), and says so.
Everything doctor wrote must still be recognised as doctor's when the path differs (an install from
another venv, an older install that wrote a bare `doctor`): `is_doctor` tells a command's program
words apart from anyone else's.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

NAME = "doctor"


def doctor_program() -> str:
    """The shell words that start this doctor: its script's absolute path, else this Python with `-m doctor`."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == NAME and script.is_file():
        return shlex.quote(os.path.abspath(script))
    beside = Path(sys.executable).parent / NAME  # the console script of this interpreter's environment
    if beside.is_file() and os.access(beside, os.X_OK):
        return shlex.quote(os.path.abspath(beside))
    return shlex.join([os.path.abspath(sys.executable), "-m", NAME])


def split_program(command: str) -> tuple[list[str], list[str]] | None:
    """`command` as (doctor's program words, the rest) when its program is a doctor; None otherwise.

    A doctor is `doctor`, an absolute path whose last part is `doctor`, or `<python> -m doctor`."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words and (words[0] == NAME or (os.path.isabs(words[0]) and Path(words[0]).name == NAME)):
        return words[:1], words[1:]
    if len(words) >= 3 and os.path.isabs(words[0]) and words[1:3] == ["-m", NAME]:
        return words[:3], words[3:]
    return None


def is_doctor(command: object, *rest: str) -> bool:
    """Whether `command` runs some doctor with exactly the arguments `rest` (`hook`, `claude`)."""
    if not isinstance(command, str):
        return False
    split = split_program(command)
    return split is not None and split[1] == list(rest)
