"""A session's replay, sampled: each result's exact size under a fixed grid of values of each key.

A fleet sweep (`doctor scan --sweep`) must answer from the triage database without the sessions' text,
and an exact answer needs the text. So the scan replays each session, exactly (the agent's own module,
doctor/whatif/<agent>.py), at every value of a fixed GRID per key, plus the value meaning "no limit"
(`top`) and `default` (as if the key were not set), and stores each result's size, cut and bounds there.
A fleet answer at a grid value is then the exact replay; between two grid values it is an interpolation,
and because a result's size never shrinks when its limit rises (the property tests/whatif checks on
every agent), the sizes at the two neighbouring grid values bound it: the answer states that bound.

Only results whose size or cut differs somewhere on the grid are kept (most results are small and the
same under every value). A key missing from GRIDS (Gemini's output-masking keys, which act across a
whole session's history) is not sampled; the fleet answer names the keys it has.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from doctor.core.jsvalues import js_len
from doctor.core.sentinels import NONE, sentinel_kind
from doctor.whatif.model import Outcome, ReplayInput

# The values sampled per key, in the key's own unit, ascending; `top` is a value meaning "no limit" to that
# agent (Qwen Code and Gemini CLI read ≤ 0 so; Claude Code clamps its Bash limit at 128,000; others: a
# value no output reaches). Chosen to hit the round values people try (sweeps of 5,000 steps meet one in
# two or four); versions of this table are told apart by GRID_VERSION.
GRID_VERSION = 1
_CHARS = (1_000, 2_000, 5_000, 10_000, 20_000, 25_000, 30_000, 50_000, 100_000, 200_000)


@dataclass(frozen=True, slots=True)
class Grid:
    values: tuple[float, ...]
    top: float  # the value passed to the replay for "no limit"
    unlimited_at_or_below_zero: bool = False  # the client reads a value ≤ 0 as no limit

    def samples(self) -> list[float | None]:
        """The overrides replayed, in stored order: each grid value, then top, then None (`default`)."""
        return [*self.values, self.top, None]


GRIDS: dict[tuple[str, str], Grid] = {
    ("qwen", "tools.truncateToolOutputThreshold"): Grid(_CHARS, -1, True),
    ("qwen", "tools.truncateToolOutputLines"): Grid((50, 100, 200, 500, 1_000, 2_000, 5_000), -1, True),
    ("qwen", "tools.toolOutputBatchBudget"): Grid((20_000, 50_000, 100_000, 200_000, 500_000), -1, True),
    ("gemini", "tools.truncateToolOutputThreshold"): Grid(_CHARS, 0, True),
    ("claude", "bashOutputMaxChars"): Grid((4_000, 10_000, 20_000, 30_000, 50_000, 80_000, 128_000), 128_000),
    ("claude", "BASH_MAX_OUTPUT_LENGTH"): Grid((10_000, 30_000, 50_000, 100_000, 150_000), 10**12),
    ("claude", "MAX_MCP_OUTPUT_TOKENS"): Grid((2_500, 5_000, 10_000, 25_000, 50_000, 100_000), 10**12),
    ("claude", "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"): Grid((2_500, 5_000, 10_000, 25_000, 50_000), 10**12),
    ("codex", "tool_output_token_limit"): Grid((250, 500, 1_000, 2_500, 5_000, 10_000, 25_000), 10**12),
}
# Agents whose results interact only within one turn's batch of parallel calls (Qwen's batch budget) or
# not at all: the middle of the grid is replayed on the batches that change only. Gemini's masking reads
# the whole history, so a Gemini session is always replayed whole.
_BY_BATCH = frozenset({"qwen", "claude", "codex"})


def keys_for(agent: str) -> list[str]:
    return [key for (owner, key) in GRIDS if owner == agent]


@dataclass(frozen=True, slots=True)
class Sampled:
    """One result under one key: per sample (Grid.samples order) its size, bounds and cut.

    `after[i]` is None when the size is unknown there; then `low[i]`..`high[i]` bound it (high None:
    unbounded). For a known size low = high = after."""

    ordinal: int
    after: tuple[int | None, ...]
    low: tuple[int, ...]
    high: tuple[int | None, ...]
    cut: tuple[bool, ...]


def sample(module, inputs: Sequence[ReplayInput], sites: Sequence, base_values: Mapping[str, float],
           agent: str) -> dict[str, list[Sampled]]:
    """key -> the results whose size or cut is not the same at every sample (the rest: as recorded)."""
    out = {}
    recorded = [js_len(site.recorded) for site in sites]
    recorded_cut = [sentinel_kind(site.recorded) != NONE for site in sites]
    whole: dict[tuple, list[tuple]] = {}  # settings -> every result's measures under them
    for key in keys_for(agent):
        grid = GRIDS[agent, key]
        out[key] = _sample_key(module, inputs, sites, base_values, key, grid, recorded, recorded_cut, agent, whole)
    return out


def _sample_key(module, inputs, sites, base_values, key, grid, recorded, recorded_cut, agent, whole) -> list[Sampled]:
    """`whole`: the whole-session replays done so far, by settings. `default` of a key the session does not
    set is the session's own settings, the same replay for every such key: it is replayed once."""
    samples = grid.samples()
    columns: list[list | None] = [None] * len(samples)
    for index in (0, len(grid.values), len(samples) - 1):  # the smallest value, top, default: every result
        values = _with(base_values, key, samples[index])
        settings = tuple(sorted(values.items()))
        if settings not in whole:
            whole[settings] = _measures(module.replay(inputs, values), sites, recorded_cut)
        columns[index] = whole[settings]
    ends = columns[0], columns[len(grid.values)], columns[-1]
    moving = [i for i in range(len(inputs)) if not (ends[0][i] == ends[1][i] == ends[2][i]
                                                    and ends[0][i][0] == recorded[i] and ends[0][i][3] == recorded_cut[i])]
    if not moving:
        return []
    subset = _batches_of(inputs, moving) if agent in _BY_BATCH else list(range(len(inputs)))
    chosen = [inputs[i] for i in subset]
    chosen_sites = [sites[i] for i in subset]
    for index in range(1, len(grid.values)):
        measured = _measures(module.replay(chosen, _with(base_values, key, samples[index])), chosen_sites,
                             [recorded_cut[i] for i in subset])
        column = [None] * len(inputs)
        for position, i in enumerate(subset):
            column[i] = measured[position]
        columns[index] = column
    rows = []
    for i in moving:
        cells = [column[i] for column in columns]
        rows.append(Sampled(sites[i].ordinal, tuple(c[0] for c in cells), tuple(c[1] for c in cells),
                            tuple(c[2] for c in cells), tuple(c[3] for c in cells)))
    return rows


def _with(base: Mapping[str, float], key: str, value: float | None) -> dict:
    values = dict(base)
    if value is None:
        values.pop(key, None)
    else:
        values[key] = value
    return values


def _measures(outcomes: Sequence[Outcome], sites: Sequence, recorded_cut: Sequence[bool]) -> list[tuple]:
    """(size or None, low, high or None, cut) per outcome, as `doctor whatif --json`'s `changes` measure it."""
    measured = []
    for site, outcome, was_cut in zip(sites, outcomes, recorded_cut):
        if outcome.text is not None:
            size = js_len(outcome.text)
            measured.append((size, size, size, outcome.layer != NONE))
        else:
            high = None if not math.isfinite(outcome.high) else int(outcome.high)
            measured.append((None, int(outcome.low), high, was_cut))
    return measured


def _batches_of(inputs: Sequence[ReplayInput], moving: Sequence[int]) -> list[int]:
    """The indices of every input in a batch (one turn's parallel calls) that holds a moving one."""
    batches = {inputs[i].batch for i in moving}
    return [i for i, item in enumerate(inputs) if item.batch in batches]
