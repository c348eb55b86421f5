"""Measure JSON text without decoding it: UTF-8 validity and JS string lengths from raw bytes.

A reader that only needs `.length` of a 30 KB tool output should not build the
Python string: the length in UTF-16 code units follows from the raw JSON token
(each escape is one unit, each 4-byte UTF-8 sequence two, every other character
one). These functions are the exact definitions, in pure Python (they decode);
the optional C module `doctor.core._rawjson`, built by setup.py when a compiler
is present, counts the same thing from the bytes without decoding (trusting input
that msgspec and `valid_utf8` accepted). `accelerated` says which one is in use;
DOCTOR_PURE_PYTHON=1 forces the pure path; tests run both and check that they agree.
"""

from __future__ import annotations

import codecs
import json
import os
import re

import orjson

from doctor.core.jsvalues import js_len


def py_valid_utf8(data) -> bool:
    """The buffer decodes as UTF-8 (strictly, as `bytes.decode`)."""
    try:
        codecs.utf_8_decode(data, "strict", True)
    except UnicodeDecodeError:
        return False
    return True


def py_string_units(token) -> int | None:
    """`JSON.parse(token).length` for a JSON string token (quotes included); None when the
    token is not one string or holds invalid UTF-8 (the caller then takes its exact path).

    Lone surrogate escapes are strings to `JSON.parse` (one unit each): orjson refuses
    them, so the stdlib decides.
    """
    token = memoryview(token)
    if len(token) < 2 or token[0] != 0x22 or token[-1] != 0x22:  # a bare token, as msgspec.Raw gives
        return None
    try:
        value = orjson.loads(token)
    except orjson.JSONDecodeError:
        try:
            text = codecs.utf_8_decode(token, "strict", True)[0]
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
    return js_len(value) if type(value) is str else None


# A JSON string token: the first unescaped quote ends it (escapes are checked by py_string_units).
_TOKEN = re.compile(rb'"(?:[^"\\\x00-\x1f]|\\.)*"', re.DOTALL)


def py_string_span(buffer, start: int, stop: int) -> tuple[int, int] | None:
    """(end, JS length) of the JSON string token at `buffer[start]` (a quote), ending before
    `stop`; None when there is none or it is not a valid token."""
    match = _TOKEN.match(buffer, start, stop)
    if match is None:
        return None
    units = py_string_units(memoryview(buffer)[start : match.end()])
    return None if units is None else (match.end(), units)


# Longest text a sentinel test looks at (every prefix in doctor.core.sentinels is shorter).
HEAD_CHARS = 64
_LEAD = 0xC0


def token_head(prefix: bytes) -> str | None:
    """The first characters of the string whose JSON token starts with `prefix` (its opening
    quote included, the token itself longer): at least HEAD_CHARS of them, or None.

    The prefix is cut before a trailing escape run and a trailing partial UTF-8 sequence, so
    what is decoded is exactly the start of the string.
    """
    body = prefix[1:]
    cut = len(body)
    slash = body.rfind(b"\\", max(0, cut - 12))
    if slash >= 0:
        while slash > 0 and body[slash - 1] == 0x5C:
            slash -= 1
        cut = slash
    while cut > 0 and 0x80 <= body[cut - 1] < _LEAD:
        cut -= 1
    if cut > 0 and body[cut - 1] >= _LEAD:
        cut -= 1
    try:
        head = orjson.loads(b'"' + body[:cut] + b'"')
    except orjson.JSONDecodeError:
        return None
    return head if len(head) >= HEAD_CHARS else None


try:
    if os.environ.get("DOCTOR_PURE_PYTHON"):
        raise ImportError("DOCTOR_PURE_PYTHON is set")
    from doctor.core._rawjson import offset_in, string_span, string_units, valid_utf8
    accelerated = True
except ImportError:
    valid_utf8, string_units, string_span = py_valid_utf8, py_string_units, py_string_span
    offset_in = None  # where a msgspec.Raw sits in the buffer it was decoded from; callers search instead
    accelerated = False

_LONG_DIGITS = re.compile(rb"[0-9]{309}")


def py_fast_decodable(data) -> bool:
    """A line a reader may decode with msgspec and get what orjson would give: valid UTF-8, and no
    integer long enough (309+ digits) that orjson refuses it while msgspec accepts it. (The C version,
    which sees runs eight bytes at a time, also refuses some runs of 296-308 digits: that only costs
    the exact path.)"""
    return py_valid_utf8(data) and _LONG_DIGITS.search(data) is None


# The sum of the JS lengths of a valid JSON value's string values (keys left out), from its raw
# bytes; C only: without the module callers decode the value and walk it (their exact path).
if accelerated:
    from doctor.core._rawjson import fast_decodable, text_units
else:
    fast_decodable, text_units = py_fast_decodable, None
