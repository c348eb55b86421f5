"""Agent versions in version order: 2.1.38 before 2.1.332, 0.47.0 before 0.171.0 (as text they were not).

A version the recording does not state (Gemini CLI and message dumps record none) is "unknown",
shown as such and sorted after every stated one.
"""

from __future__ import annotations

import re

UNKNOWN = "unknown"
_PARTS = re.compile(r"\d+|[^\d.\-+_]+")


def version_order(version: str | None) -> tuple:
    """A sort key: numbers compared as numbers, other parts as text (a part that is text sorts before
    a number at the same place: 1.0.0-rc1 before 1.0.0.1); no version last."""
    if not version or version == UNKNOWN:
        return (1,)
    return (0, tuple((1, int(part), "") if part.isdigit() else (0, 0, part) for part in _PARTS.findall(version)))


def shown_version(version: str | None) -> str:
    return version if version else UNKNOWN
