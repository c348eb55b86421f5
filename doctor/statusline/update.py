"""The figures of a transcript as of now, reading only what was appended since the last call.

A last line without its newline is a record the agent is still writing: it is never counted. The
agent runs its status line when a turn's state changes, often while it writes that turn's record,
and shows what it printed until its next run (Qwen Code: the next prompt), so the call waits for the
record to be complete, at most TORN_WAIT seconds, and counts it then; a line that stays cut (an
agent killed mid-write) is left out, as by the next call.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from doctor.safety.private_folders import private_cache_folder
from doctor.statusline import cache
from doctor.statusline.line import Figures, figures_of
from doctor.statusline.resume import STATES

TORN_WAIT = 0.5
POLL = 0.01


class NothingYet(Exception):
    """The transcript holds no complete line yet: the agent is writing its first record."""


def current_figures(agent: str, transcript: Path) -> Figures | None:
    """Resume the saved state (or start one), save it at the last complete line, then wait for a last
    line still being written to end (`TORN_WAIT`) and read it, so the figures are `doctor memory`'s of
    the file's complete records.
    None when the analysis is unavailable for this history (`doctor memory` says why); NothingYet
    before the first record is complete. Without a
    private cache folder (`private_cache_folder` says why on stderr) every call reads the whole file."""
    from doctor.assemble import ReportOptions
    from doctor.config import load_budget_overrides

    options = ReportOptions(tool_budgets=load_budget_overrides())  # what `doctor memory` uses by default
    kind = STATES[agent]
    folder = private_cache_folder(cache.FOLDER)
    try:
        stamp = cache.code_stamp()
        state = cache.load(folder, agent, transcript, stamp, kind) if folder is not None else None
        resumed = state is not None
        if state is None:
            state = kind(transcript)
        start = state.offset
        state.feed(whole_lines_only=True)
        if folder is not None and (state.settle(options) or not resumed or state.offset != start):
            data = cache.snapshot(state, transcript, stamp)
            if data is not None:
                try:
                    cache.save(folder, agent, transcript, data)
                except OSError as exc:  # the line is still right; only the next call is slower
                    print(f"doctor statusline: could not save the index: {exc.strerror or exc}", file=sys.stderr)
    finally:
        if folder is not None:
            folder.close()
    if _wait_for_newline(transcript, state.offset):
        state.feed(whole_lines_only=True)
    if state.offset == 0:
        raise NothingYet
    return figures_of(state.analysis(options))


def _wait_for_newline(transcript: Path, offset: int) -> bool:
    """Whether the bytes after `offset` (where the last complete line ended) end a line within TORN_WAIT
    seconds; False at once when nothing follows it."""
    deadline = time.monotonic() + TORN_WAIT
    try:
        with open(transcript, "rb") as handle:
            handle.seek(offset)
            pending = False
            while True:
                chunk = handle.read(1 << 16)  # at the end: b"", and the next read sees what was appended
                if b"\n" in chunk:
                    return True
                pending = pending or bool(chunk)
                if not chunk:
                    if not pending or time.monotonic() >= deadline:
                        return False
                    time.sleep(POLL)
    except OSError:
        return False
