"""The records of a JSON Lines session file, for the facts a replay needs beyond the neutral history.

Claude's `toolUseResult`, Gemini's per-message token counts and Codex's `aggregated_output` are not
model context, so the session readers do not put them in the history; an agent's replay module reads
them here, through the same streaming reader every session reader uses (one line at a time, bad lines
skipped), from the file doctor already opened.
"""

from __future__ import annotations

from collections.abc import Iterator

from doctor.sources.base import LoadedSession, SourceIssue
from doctor.sources.jsonl import iter_line_spans, line_values


def session_records(session: LoadedSession, needle: bytes) -> Iterator[dict]:
    """Each JSON object line of the session file holding `needle` (nothing for a session without one):
    the other lines are not decoded, so a replay reads the file at little more than the cost of a scan."""
    if session.path is None or session.path.suffix != ".jsonl" or not session.path.is_file():
        return
    issues: list[SourceIssue] = []  # the session reader already reported them
    number = 0
    for _, buffer, view, begin, end, terminated in iter_line_spans(session.path):
        number += 1
        if buffer.find(needle, begin, end) < 0:
            continue
        for value in line_values(session.path, number, buffer, view, begin, end, terminated, issues):
            if isinstance(value, dict):
                yield value


RECORDED_UNDER = "whatif.recorded_under"


def remember_recorded_settings(session: LoadedSession, values: dict) -> None:
    """Keep the limits the session's results were produced under with the session (the framework reads
    the settings before the replay inputs): a result whose raw output the recording does not keep is
    still known under these very limits."""
    session.meta[RECORDED_UNDER] = dict(values)


def recorded_settings(session: LoadedSession) -> dict | None:
    value = session.meta.get(RECORDED_UNDER)
    return value if isinstance(value, dict) else None
