"""The figures of a transcript as of now, reading only what was appended since the last call."""

from __future__ import annotations

import sys
from pathlib import Path

from doctor.safety.private_folders import private_cache_folder
from doctor.statusline import cache
from doctor.statusline.line import Figures, figures_of
from doctor.statusline.resume import STATES


def current_figures(agent: str, transcript: Path) -> Figures | None:
    """Resume the saved state (or start one), save it at the last complete line, then read a last
    line still being written too, so the figures match `doctor memory` of the file as it is.
    None when the analysis is unavailable for this history (`doctor memory` says why). Without a
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
    state.feed(whole_lines_only=False)
    return figures_of(state.analysis(options))
