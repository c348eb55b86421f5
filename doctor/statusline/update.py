"""The session of a transcript as of now, reading only what was appended since the last call."""

from __future__ import annotations

import sys
from pathlib import Path

from doctor.sources.base import LoadedSession
from doctor.statusline import cache
from doctor.statusline.resume import STATES


def current_session(agent: str, transcript: Path) -> LoadedSession:
    """Resume the saved state (or start one), save it at the last complete line, then read a last
    line still being written too, so the figures match `doctor memory` of the file as it is."""
    stamp = cache.code_stamp()
    state = cache.load(agent, transcript, stamp)
    resumed = state is not None
    if state is None:
        state = STATES[agent](transcript)
    start = state.offset
    state.feed(whole_lines_only=True)
    if not resumed or state.offset != start:
        data = cache.snapshot(state, transcript, stamp)
        if data is not None:
            try:
                cache.save(agent, transcript, data)
            except OSError as exc:  # the line is still right; only the next call is slower
                print(f"doctor statusline: could not save the index: {exc.strerror or exc}", file=sys.stderr)
    state.feed(whole_lines_only=False)
    return state.session()
