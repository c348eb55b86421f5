"""The size bins of injected chars (and tokens), one set of edges for every picture of the triage database.

The report's histograms, the Fleet screen's and the OTLP / OpenMetrics histograms use the same
upper bounds, 1-3-10 per decade up to 10 M: bin i holds the sizes in (BOUNDS[i-1], BOUNDS[i]],
upper edge included as OTLP's explicit buckets and Prometheus' `le` define it, and the last bin
everything above 10 M. A count in the report's bin therefore equals the same bucket's count in the
metrics (cumulated there).
"""

from __future__ import annotations

BOUNDS = tuple(float(m * 10 ** e) for e in range(8) for m in (1, 3))[:-1]  # 1, 3, 10, 30 … 3 M, 10 M


def bin_sql(column: str) -> str:
    """The bin index of `column` in SQL (DuckDB)."""
    cases = " ".join(f"WHEN {column} <= {bound!r} THEN {index}" for index, bound in enumerate(BOUNDS))
    return f"CASE {cases} ELSE {len(BOUNDS)} END"


def _short(value: float) -> str:
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if value >= size:
            return f"{value / size:g}{unit}"
    return f"{value:g}"


def bin_label(index: int) -> str:
    """`≤ 30`, `≤ 3k`, `> 10M`: the bin's upper edge (its lower edge is the previous bin's)."""
    return f"≤ {_short(BOUNDS[index])}" if index < len(BOUNDS) else f"> {_short(BOUNDS[-1])}"
