"""`js_len` is JavaScript's `.length`: UTF-16 code units, by the C count and by the pure path alike.

The reference is Python's own UTF-16 encoder (`surrogatepass` keeps lone surrogates, one unit
each, as JavaScript strings hold them); texts mix ASCII, BMP, astral and surrogate code points
so every CPython storage width (1, 2 and 4 bytes per code point) is met.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core import jsvalues
from doctor.core.jsvalues import MeasuredText, js_len

ANY_CODE_POINT = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
TEXTS = st.one_of(st.text(ANY_CODE_POINT), st.text(st.characters(max_codepoint=0xFFFF)), st.text(max_size=3).map(lambda t: t * 40_000))


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@pytest.fixture(params=["as built", "pure"])
def counting(request, monkeypatch):
    """js_len once as this build runs it (the C count where compiled) and once by the pure path."""
    if request.param == "pure":
        monkeypatch.setattr(jsvalues, "_utf16_length", None)
    return request.param


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # the patch holds for every example
@given(text=TEXTS)
def test_js_len_counts_utf16_units(counting, text: str) -> None:
    assert js_len(text) == utf16_units(text)


def test_js_len_named_cases(counting) -> None:
    assert js_len("") == 0
    assert js_len("héllo") == 5
    assert js_len("中文") == 2
    assert js_len("😀") == 2
    assert js_len("a😀b\ud800c") == 6  # a lone surrogate is one unit
    assert js_len("😀" * 100_000 + "x") == 200_001


def test_measured_text_keeps_its_length(counting) -> None:
    assert js_len(MeasuredText("head", 123_456)) == 123_456


def _stringify_reference(text: str) -> int:
    """`JSON.stringify(text).length` built as JavaScript builds it: `"` and `\\` and the C0 controls escaped
    (`\\n`-style where JSON has one, else `\\u00XX`), a well-formed surrogate pair kept, a lone surrogate
    escaped as `\\uXXXX`; then counted in UTF-16 units."""
    units = text.encode("utf-16-le", "surrogatepass")
    codes = [int.from_bytes(units[i:i + 2], "little") for i in range(0, len(units), 2)]
    out, i = 0, 0
    while i < len(codes):
        code = codes[i]
        if 0xD800 <= code <= 0xDBFF and i + 1 < len(codes) and 0xDC00 <= codes[i + 1] <= 0xDFFF:
            out, i = out + 2, i + 2
            continue
        out += 2 if chr(code) in '"\\\b\f\n\r\t' else 6 if code < 0x20 or 0xD800 <= code <= 0xDFFF else 1
        i += 1
    return out + 2


@given(st.one_of(st.text(ANY_CODE_POINT), st.text(st.sampled_from('ab"\\\n\t\x00\x1f\x7f\u00e9\U0001F600\ud83d\ude00'))))
def test_json_string_len_is_javascripts(text: str) -> None:
    """`JSON.stringify(text).length`, with or without surrogates (the fast count works on UTF-8 bytes)."""
    assert jsvalues.json_string_len(text) == _stringify_reference(text)
