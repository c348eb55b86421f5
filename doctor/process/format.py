"""Plain-string formatting of byte counts, times and ratios, the way Qwen Code prints them.

Qwen's numbers go through JavaScript's `Number.prototype.toFixed`, which rounds the *exact
binary value* of the double and breaks ties upward (away from zero). Python's `format` rounds
ties to even, so 1280 B is `1.3 KB` in Qwen but would be `1.2 KB` here without `to_fixed`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal

BYTES_PER_KB = 1024
BYTES_PER_MB = BYTES_PER_KB * 1024
BYTES_PER_GB = BYTES_PER_MB * 1024

UNAVAILABLE = "unavailable"


def to_fixed(value: float, digits: int) -> str:
    """Format like JavaScript's `value.toFixed(digits)` for finite values below 1e21.

    `Decimal(float)` is the exact binary value, so ties are decided on what the double really
    holds, as the ECMAScript algorithm does. JS prints `-0` as `0`, hence the zero guard.
    """
    if value == 0:
        value = 0.0
    quantum = Decimal(1).scaleb(-digits)
    return format(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP), "f")


def _rounded(value: float, digits: int) -> float:
    """`Number(value.toFixed(digits))`: Qwen picks the unit on the rounded value."""
    return float(to_fixed(value, digits))


def format_bytes(byte_count: float | None) -> str:
    """Qwen's `formatMemoryUsage`: `KB` below 1024 KB, `MB` below 1024 MB, else `GB`.

    The unit switch compares the value *after* rounding, so 1,048,575 B is `1.0 MB`, not
    `1024.0 KB`. `None` (a probe that could not read) prints as `unavailable`.
    """
    if byte_count is None:
        return UNAVAILABLE
    if _rounded(byte_count / BYTES_PER_KB, 1) < 1024:
        return f"{to_fixed(byte_count / BYTES_PER_KB, 1)} KB"
    if _rounded(byte_count / BYTES_PER_MB, 1) < 1024:
        return f"{to_fixed(byte_count / BYTES_PER_MB, 1)} MB"
    return f"{to_fixed(byte_count / BYTES_PER_GB, 2)} GB"


def format_byte_delta(delta: float | None) -> str:
    """A signed change such as `+1.3 KB` or `-64.0 MB`.

    `format_bytes` on a negative number always lands in `KB` (Qwen never formats deltas with
    it), so the sign is kept apart and the magnitude formatted on its own.
    """
    if delta is None:
        return UNAVAILABLE
    sign = "-" if delta < 0 else "+"
    return f"{sign}{format_bytes(abs(delta))}"


def format_mib(byte_count: float | None) -> str:
    """Qwen's `--sample` formatter: mebibytes with one decimal, e.g. `12.5 MiB`."""
    if byte_count is None:
        return UNAVAILABLE
    return f"{to_fixed(byte_count / BYTES_PER_MB, 1)} MiB"


def format_cpu_seconds(seconds: float) -> str:
    """CPU time with two decimals and an `s`, as Qwen shows `userCPUTime` (10 µs → `0.00s`)."""
    return f"{to_fixed(seconds, 2)}s"


def format_uptime(seconds: float) -> str:
    """Uptime with one decimal, as Qwen shows `uptimeSeconds` (60 → `60.0`)."""
    return to_fixed(seconds, 1)


def format_percent(ratio: float | None) -> str:
    """A ratio as a percentage with one decimal (0.875 → `87.5%`)."""
    if ratio is None:
        return UNAVAILABLE
    return f"{to_fixed(ratio * 100, 1)}%"


def format_iso_timestamp(moment: datetime) -> str:
    """JavaScript's `Date.toISOString()`: UTC, milliseconds, a `Z` suffix.

    Milliseconds are truncated, not rounded, as a JS Date only holds whole milliseconds.
    """
    utc = moment.astimezone(timezone.utc)
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"
