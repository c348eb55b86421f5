"""JavaScript string arithmetic on Python strings: lengths and slices in UTF-16 code units.

A JS `slice` may cut a surrogate pair in two; the half it keeps is a lone surrogate, which Python
holds as such (the session reader decodes a recorded lone surrogate the same way), so lengths and
texts come out as the agent's own.
"""

from __future__ import annotations

from doctor.core.jsvalues import js_len

__all__ = ["js_len", "js_slice", "js_head", "js_tail"]


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _text(units: bytes) -> str:
    return units.decode("utf-16-le", "surrogatepass")


def js_slice(text: str, start: int, end: int | None = None) -> str:
    """`text.slice(start, end)` for 0 ≤ start (end None: to the end)."""
    if text.isascii():
        return text[start:end]
    units = _units(text)
    return _text(units[2 * start:None if end is None else 2 * end])


def js_head(text: str, count: int) -> str:
    """`text.slice(0, count)`."""
    return js_slice(text, 0, max(count, 0))


def js_tail(text: str, count: int) -> str:
    """`text.slice(-count)` for count > 0 (JavaScript gives the whole text for count 0)."""
    if count <= 0:
        return text
    if text.isascii():
        return text[-count:]
    units = _units(text)
    return _text(units[-2 * count:])
