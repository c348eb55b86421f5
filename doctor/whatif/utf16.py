"""`slice` from either end of a JavaScript string, on Python strings (`jsstring`'s UTF-16 unit form).

A JS `slice` may cut a surrogate pair in two; the half it keeps stays a lone surrogate, as the session
reader decodes one, so lengths and texts come out as the agent's own.
"""

from __future__ import annotations

from doctor.whatif.jsstring import from_units, to_units


def js_head(text: str, count: int) -> str:
    """`text.slice(0, count)`."""
    return text[:max(count, 0)] if text.isascii() else from_units(to_units(text)[:max(count, 0)])


def js_tail(text: str, count: int) -> str:
    """`text.slice(-count)` (JavaScript gives the whole text for a count of 0)."""
    if count <= 0:
        return text
    return text[-count:] if text.isascii() else from_units(to_units(text)[-count:])
