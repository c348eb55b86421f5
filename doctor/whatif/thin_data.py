"""When the data is too thin to recommend a budget: one rule for `doctor whatif --recommend` and the fleet's.

Its own module so that the fleet answer, which reads only the database, does not import the replay."""

from __future__ import annotations

MIN_RESULTS = 5  # fewer results of known size than this is too thin to recommend a budget


def too_few(sized: int) -> str:
    """Why no budget is recommended for a tool with `sized` results of known size (fewer than MIN_RESULTS)."""
    known = "no result" if sized == 0 else "1 result" if sized == 1 else f"only {sized} results"
    return f"{known} with a known size: too few to recommend ({MIN_RESULTS} needed)"
