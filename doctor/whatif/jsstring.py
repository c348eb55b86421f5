"""JavaScript string semantics for the replayed arithmetic: UTF-16 units, UTF-8 bytes as Node counts them.

The clients cut text with `slice`, `length` and `split` on UTF-16 code units, so an astral character is
two units and a cut can fall between them. A replay works on the text in that form (`to_units`: every
astral character as its two surrogates, so Python's `len`, slices and `split` are JavaScript's), and
turns the result back (`from_units`: pairs joined, a lone surrogate left as the client left it) so it
compares equal to what a session file decodes to.
"""

from __future__ import annotations

import codecs
import hashlib
import math
import re
from functools import lru_cache

from doctor.core.jsvalues import js_len

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_CACHED = 8192
# unit form -> the text it was made from, when that text holds no surrogate: `from_units` of the form is then
# exactly the text, so a result the layers leave as it was comes back without a conversion (cleared when full).
_JOINED: dict[str, str] = {}


def _js_replace(error: UnicodeEncodeError) -> tuple[str, int]:
    """Node writes a lone surrogate as U+FFFD (EF BF BD)."""
    return "\ufffd", error.end


codecs.register_error("doctor-js-utf8", _js_replace)


def _pair(match: re.Match) -> str:
    code = ord(match.group()) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


@lru_cache(maxsize=_CACHED)
def to_units(text: str) -> str:
    """`text` with every astral character as its surrogate pair (one str item per UTF-16 unit).

    Cached: a sweep converts the same raw outputs once per value (a str keeps its hash, so a hit costs
    a lookup). A text with no astral character is returned as it is (its JS length is its length)."""
    if js_len(text) == len(text):
        return text
    units = _ASTRAL.sub(_pair, text)
    try:
        text.encode("utf-8")  # no surrogate of its own, which `from_units` could join with a neighbour
    except UnicodeEncodeError:
        return units
    if len(_JOINED) >= _CACHED:
        _JOINED.clear()
    _JOINED[units] = text
    return units


def from_units(text: str) -> str:
    """Surrogate pairs joined back into characters; lone surrogates stay (as a session decodes them)."""
    if text.isascii():
        return text
    joined = _JOINED.get(text)
    if joined is not None:
        return joined  # a text's unit form, unchanged: that text (its pairs joined back without a conversion)
    try:
        text.encode("utf-8")  # fails on a surrogate and only then; in C, several times faster than a regex search
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def utf8(text: str) -> bytes:
    """`Buffer.from(text, "utf-8")`: UTF-8, a lone surrogate as U+FFFD."""
    return from_units(text).encode("utf-8", "doctor-js-utf8")


def sha256_hex(text: str) -> str:
    return hashlib.sha256(utf8(text)).hexdigest()


def js_round(value: float) -> int:
    """`Math.round`: halves go up (Python's round goes to even)."""
    return math.floor(value + 0.5)


def js_floor(value: float) -> float:
    """`Math.floor`, which leaves Infinity infinite."""
    return value if math.isinf(value) else math.floor(value)
