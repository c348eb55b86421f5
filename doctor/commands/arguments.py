"""Argument types the commands share, so every count option refuses bad values with the same words.

`argparse` then prints the command's usage and `error: argument --top: must be a positive
integer, not '0'`, exit 2, whatever the mistake (0, -1, x, 2.5).
"""

from __future__ import annotations

import argparse


def _integer(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def positive_int(text: str) -> int:
    """1 or more (`--top 0` would list nothing, `--limit 0` print nothing)."""
    value = _integer(text)
    if value is None or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """0 or more (a zero-based offset, or a limit where 0 means all)."""
    value = _integer(text)
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text!r}")
    return value
