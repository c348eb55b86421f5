"""JavaScript value semantics that Qwen Code's numbers depend on.

Qwen measures strings with `.length` (UTF-16 code units), tests parts with JS
truthiness and measures unknown parts with `JSON.stringify(part).length`. A
Python port that used code points, Python truthiness or `json.dumps` would be
off by a few characters on exactly the inputs users bring (emoji, `{}` parts,
floats), so every such rule lives here, in one place.

Nothing here copies or re-encodes a large string: CPython already stores each
string at a fixed width (1, 2 or 4 bytes per code point), and only 4-byte
strings can hold astral characters, which are the only ones whose UTF-16 length
differs from their code-point count.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping

from doctor.core.compiled import compiled_module

# sys.getsizeof of a compact non-ASCII str is this base plus (len + 1) * width.
_COMPACT_BASE = sys.getsizeof("\u0100") - 2 * 2
# Slices this long keep the astral count's temporary buffers around 256 KB.
_ASTRAL_SCAN_CHUNK = 1 << 16
# The C count of a str's UTF-16 units (one pass over a 4-byte string, no copy), when built.
_utf16_length = getattr(compiled_module(), "utf16_length", None)


def _may_hold_astral(text: str) -> bool:
    """True unless CPython stores `text` at 1 or 2 bytes per code point.

    The width is read off `sys.getsizeof` (O(1)); when a cached UTF-8 copy makes
    the size ambiguous the answer errs towards True, which only costs a scan.
    """
    if text.isascii():
        return False
    size = sys.getsizeof(text)
    slots = len(text) + 1
    return size != _COMPACT_BASE + slots and size != _COMPACT_BASE + 2 * slots


class MeasuredText(str):
    """A long string a reader measured but did not decode: its head, and its JS length.

    The str value is only the head (enough for every sentinel-prefix test); `js_length` is
    `.length` of the whole text. Readers hand these to the retention analysis only, and only
    for text that starts with no sentinel header (those are decoded whole, to be parsed).
    Where an agent's own measure needs more of the whole text, the reader that had it says so:
    `utf8_length` (its UTF-8 bytes: Codex counts bytes) and `json_length` (`JSON.stringify(text)
    .length`, quotes included: Gemini CLI estimates a tool response's tokens from its JSON), or
    `json_token` (file, start, end) of a JSON token written as JSON.stringify writes it, whose
    length `json_string_len` then reads from the file when first asked (only the results a
    measure looks at cost a read); None when the reader did not measure it.
    """

    __slots__ = ("js_length", "utf8_length", "json_length", "json_token")

    def __new__(cls, head: str, js_length: int, utf8_length: int | None = None,
                json_length: int | None = None, json_token: tuple | None = None) -> MeasuredText:
        text = super().__new__(cls, head)
        text.js_length = js_length
        text.utf8_length = utf8_length
        text.json_length = json_length
        text.json_token = json_token
        return text

    def __copy__(self) -> MeasuredText:
        return self  # immutable, as a str is

    def __deepcopy__(self, memo: dict) -> MeasuredText:
        return self


def js_len(text: str) -> int:
    """`text.length` in JavaScript: UTF-16 code units.

    An astral character counts 2, a lone surrogate counts 1.
    """
    if type(text) is MeasuredText:
        return text.js_length
    if _utf16_length is not None:
        return _utf16_length(text)
    length = len(text)
    if not _may_hold_astral(text):
        return length
    extra = 0
    for start in range(0, length, _ASTRAL_SCAN_CHUNK):
        chunk = text[start : start + _ASTRAL_SCAN_CHUNK]
        extra += (len(chunk.encode("utf-16-le", "surrogatepass")) >> 1) - len(chunk)
    return length + extra


def utf8_len(text: str) -> int:
    """Bytes of `text` in UTF-8 (a lone surrogate as the 3 bytes its WTF-8 form takes)."""
    if type(text) is MeasuredText:
        if text.utf8_length is None:
            raise ValueError("the reader did not measure this text's UTF-8 length")
        return text.utf8_length
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def json_string_len(text: str) -> int:
    """`JSON.stringify(text).length`: the JS length of the string literal, quotes and escapes included."""
    if type(text) is MeasuredText:
        if text.json_length is None and text.json_token is not None:
            from doctor.core.rawjson import token_units_in_file

            text.json_length = token_units_in_file(*text.json_token)
        if text.json_length is None:
            raise ValueError("the reader did not measure this text's JSON length")
        return text.json_length
    return _js_string_literal_len(text)


def js_truthy(value: object) -> bool:
    """JavaScript truthiness: `{}` and `[]` are true, `""`, 0 and NaN are false."""
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return value != 0
    if isinstance(value, float):
        return not (value == 0 or math.isnan(value))
    return True


def js_number(value: float | int) -> str:
    """`String(n)` for a JS number (what JSON.stringify writes for finite numbers).

    Python ints are first rounded to a double, as `JSON.parse` would have done.
    """
    number = float(value)
    if number == 0:
        return "0"
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))  # exact, and what the digit path below would give
    digits, exponent = _shortest_digits(abs(number))
    sign = "-" if number < 0 else ""
    # ECMAScript Number::toString: n is the decimal exponent of the leading digit + 1.
    n = exponent + 1
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def _shortest_digits(number: float) -> tuple[str, int]:
    """Shortest round-trip digits of a positive double and the decimal exponent
    of its leading digit; repr() and JS both pick the shortest correctly rounded form."""
    mantissa, _, exponent_text = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    exponent = (int(exponent_text) if exponent_text else 0) + len(whole) - 1
    significant = digits.lstrip("0")
    exponent -= len(digits) - len(significant)
    return significant.rstrip("0") or "0", exponent


# Characters JSON.stringify escapes: quote, backslash, C0 controls, and
# surrogates (a well-formed pair is matched first and left alone).
_NEEDS_ESCAPE = re.compile(
    "[\ud800-\udbff][\udc00-\udfff]|[\"\\\\\x00-\x1f\ud800-\udfff]"
)
_SHORT_ESCAPES = frozenset('"\\\b\f\n\r\t')


# The same characters as UTF-8 bytes (all ASCII, so no byte of a longer character is one of them): every one
# escaped, and those escaped as `\uNNNN` (the rest take `\n`, `\"` and the like).
_ESCAPED_BYTES = bytes([*range(0x20), ord('"'), ord("\\")])
_LONG_ESCAPED_BYTES = bytes(code for code in range(0x20) if chr(code) not in _SHORT_ESCAPES)


def _js_string_literal_len(text: str) -> int:
    """Length of JSON.stringify(text), without building it.

    A text without surrogates has its escapes counted in its UTF-8 bytes by two C passes (`translate`): a
    Python step per escape (a newline is one) cost Gemini's replays a quarter of a second per sweep."""
    length = js_len(text) + 2
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a surrogate: a well-formed pair is left alone, a lone one escaped
        pass
    else:
        escaped = len(data) - len(data.translate(None, _ESCAPED_BYTES))
        if escaped:
            escaped += 4 * (len(data) - len(data.translate(None, _LONG_ESCAPED_BYTES)))  # 6 chars for 1, not 2
        return length + escaped
    if not _NEEDS_ESCAPE.search(text):
        return length
    for match in _NEEDS_ESCAPE.finditer(text):
        char = match.group()
        if len(char) == 2:
            continue
        length += 1 if char in _SHORT_ESCAPES else 5
    return length


def _is_array_index(key: str) -> bool:
    """JS orders own keys that are canonical array indices (0..2**32-2) first."""
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


def js_object_keys(mapping: Mapping) -> list[str]:
    """Own enumerable keys in JS order: array indices ascending, then insertion order."""
    keys = [str(key) for key in mapping]
    indices = sorted((k for k in keys if _is_array_index(k)), key=int)
    if not indices:
        return keys
    return indices + [k for k in keys if not _is_array_index(k)]


class _Undefined:
    """Marker for values JSON.stringify drops (functions, undefined)."""


UNDEFINED = _Undefined()


def _plain(value: object) -> object:
    """View a host object as the JSON-ish value JS would serialize.

    google-genai / pydantic objects serialize by alias (camelCase) without unset
    fields, which is what the JS SDK's objects hold.
    """
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: v for k, v in vars(value).items() if not k.startswith("_") and v is not None}
    return UNDEFINED


def js_stringify_len(value: object) -> int | None:
    """`JSON.stringify(value).length`, or None where JS returns undefined.

    Raises ValueError on a circular structure, as JS throws a TypeError.
    """
    return _stringify_len(value, set())


def _stringify_len(value: object, active: set[int]) -> int | None:
    if value is None:
        return 4
    if value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, str):
        return _js_string_literal_len(value)
    if isinstance(value, (int, float)):
        number = float(value) if not isinstance(value, float) else value
        if isinstance(value, int) and abs(value) > sys.float_info.max:
            return 4
        if math.isnan(number) or math.isinf(number):
            return 4  # null
        return len(js_number(number))
    if isinstance(value, Mapping):
        return _stringify_mapping_len(value, active)
    if isinstance(value, (list, tuple)):
        return _stringify_array_len(value, active)
    plain = _plain(value)
    if plain is UNDEFINED:
        return None
    return _stringify_len(plain, active)


def _enter(value: object, active: set[int]) -> None:
    if id(value) in active:
        raise ValueError("Converting circular structure to JSON")
    active.add(id(value))


def _stringify_mapping_len(mapping: Mapping, active: set[int]) -> int:
    _enter(mapping, active)
    try:
        total = 2  # {}
        members = 0
        by_text_key = {str(key): key for key in mapping}
        for key in js_object_keys(mapping):
            item = _stringify_len(mapping[by_text_key[key]], active)
            if item is None:
                continue
            total += _js_string_literal_len(key) + 1 + item
            members += 1
        return total + max(members - 1, 0)
    finally:
        active.discard(id(mapping))


def _stringify_array_len(items, active: set[int]) -> int:
    _enter(items, active)
    try:
        total = 2 + max(len(items) - 1, 0)
        for item in items:
            size = _stringify_len(item, active)
            total += 4 if size is None else size  # undefined in an array is null
        return total
    finally:
        active.discard(id(items))
