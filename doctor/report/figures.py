"""Numbers as every report format prints them: thousands separated, ∞ for no budget, — for unknown."""

from __future__ import annotations

import math


def figure(value: float | None) -> str:
    """12,345 for counts and chars; 2.5 kept as a decimal; ∞ for an infinite budget; — when unknown."""
    if value is None:
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"


def ratio_text(value: float) -> str:
    """A size against its limit, two decimals: `1.25`; `<0.01` for a tiny result (0.00 would read as none)."""
    return "<0.01" if 0 < value < 0.005 else f"{value:.2f}"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 result`, `3 results` (irregular plurals passed as `nouns`)."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"
