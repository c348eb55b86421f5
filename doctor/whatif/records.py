"""The records of a JSON Lines session file, for the facts a replay needs beyond the neutral history.

Claude's `toolUseResult`, Gemini's per-message token counts and Codex's `aggregated_output` are not
model context, so the session readers do not put them in the history; an agent's replay module reads
them here, through the same streaming reader every session reader uses (one line at a time, bad lines
skipped), from the file doctor already opened.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from doctor.core.settings import deep_merge, read_settings_file
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


def merged_settings(session: LoadedSession, options, agent_files: Callable[[Path | None, Mapping], list[Path]]
                    ) -> tuple[dict, list[str], Mapping[str, str]]:
    """The agent's settings files for this session's project (`agent_files`, as `doctor.core.agent_rules`
    lists them) then the `--settings` files, merged later-wins; the files read; the environment used."""
    env = options.env if options.env is not None else os.environ
    project = session.meta.get("cwd") or session.project_dir
    files = (agent_files(Path(project) if project else None, env) if options.use_default_settings_files else []) \
        + list(options.settings_files)
    merged: dict = {}
    used = []
    for path in files:
        if Path(path).is_file():
            merged = deep_merge(merged, read_settings_file(Path(path)))
            used.append(str(path))
    return merged, used, env
