"""Measure JSON text without decoding it: UTF-8 validity and JS string lengths from raw bytes.

A reader that only needs `.length` of a 30 KB tool output should not build the
Python string: the length in UTF-16 code units follows from the raw JSON token
(each escape is one unit, each 4-byte UTF-8 sequence two, every other character
one). These functions are the exact definitions, in pure Python (they decode);
the optional C module `doctor.core._rawjson`, built by setup.py when a compiler
is present, counts the same thing from the bytes without decoding (trusting input
that msgspec and `valid_utf8` accepted). Its `scan_line` checks every string of a line
as JSON.parse reads it and hands back a copy with the long string values replaced by
"" (`ShortenedLine` maps positions back), so a reader's msgspec decode skips a few bytes
instead of the long text; the pure `py_scan_line` only validates and never shortens.
`scan_value` does the same for one value inside a bigger buffer and says where it ends
(a legacy document's message); the pure `py_scan_value` only finds the end.
`marked_lines` finds the lines of a buffer holding any of a few byte strings (the spill audit's
markers) and counts its newlines in one pass; the pure `py_marked_lines` makes a pass per marker.
`accelerated` says which one is in use; DOCTOR_PURE_PYTHON=1 forces the pure path;
tests run both and check that they agree (tests/core/test_rawjson.py, tests/sources/test_qwen_measured.py).
"""

from __future__ import annotations

import codecs
import json
import os
import re

import orjson

from doctor.core.compiled import compiled_module
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


def py_scan_line(buffer, start: int, stop: int, shorten: int):
    """`scan_line` without shortening: None when `buffer[start:stop]` is not valid UTF-8
    (the caller's exact path judges it), else (None, ()): decode the line itself."""
    return (None, ()) if py_valid_utf8(memoryview(buffer)[start:stop]) else None


# What a JSON value's end is looked for between: a quote opens a string, brackets nest.
_STRUCTURE = re.compile(rb'["{}\[\]]')


def py_scan_value(buffer, start: int, stop: int, shorten: int):
    """`scan_value` without checking or shortening: None when no value (object, array or string)
    opens at `buffer[start]` and ends before `stop`, else (end, None, (), deepest, False). Only
    the structure is followed (quotes, backslashes, brackets): the caller decodes the value itself,
    which checks everything else. `buffer` is bytes or an mmap (it needs `find`)."""
    if not 0 <= start < stop or buffer[start] not in b'{["':
        return None
    search, find = _STRUCTURE.search, buffer.find
    depth = deepest = 0
    at = start
    while (match := search(buffer, at, stop)) is not None:
        at = match.end()
        char = buffer[at - 1]
        if char == 0x22:  # skip the string: its end is the first quote after an even run of backslashes
            body = at
            while True:
                quote = find(b'"', at, stop)
                if quote < 0:
                    return None
                slash = quote
                while slash > body and buffer[slash - 1] == 0x5C:
                    slash -= 1
                at = quote + 1
                if (quote - slash) % 2 == 0:
                    break
        elif char == 0x7B or char == 0x5B:
            depth += 1
            deepest = max(deepest, depth)
            continue
        else:
            depth -= 1
        if depth <= 0:
            return at, None, (), deepest, False
    return None


# The most markers `marked_lines` takes (the C module's fixed table).
MAX_MARKERS = 16


def py_marked_lines(buffer, start: int, stop: int, markers: tuple[bytes, ...]):
    """([(begin, end), ...], newlines): the lines of `buffer[start:stop]` (bytes or an mmap; whole
    lines: `start` begins one, each ends at its "\n", the last maybe at `stop`) that hold any of
    `markers`, in order, each once, without their "\n"; and the "\n" in `buffer[start:stop]`. One
    `bytes.find` pass per marker; only the lines around a hit are looked at. A marker is non-empty
    bytes without a newline (a line holds it whole), MAX_MARKERS of them at most; else ValueError."""
    if len(markers) > MAX_MARKERS or not all(isinstance(m, bytes) and m and b"\n" not in m for m in markers):
        raise ValueError(f"markers must be at most {MAX_MARKERS} non-empty bytes without a newline")
    lines: dict[int, int] = {}
    for marker in markers:
        at = buffer.find(marker, start, stop)
        while at >= 0:
            newline = buffer.rfind(b"\n", start, at)
            begin = newline + 1 if newline >= 0 else start
            end = buffer.find(b"\n", at, stop)
            if end < 0:
                end = stop
            lines[begin] = end
            at = buffer.find(marker, end, stop)
    # bytes are counted in place; a map has no `count`: its run is copied
    newlines = buffer.count(b"\n", start, stop) if isinstance(buffer, bytes) else buffer[start:stop].count(b"\n")
    return sorted(lines.items()), newlines


# A long token's bytes are read back this many at a time to measure it (`token_units_in_file`).
_TOKEN_PIECE = 1 << 20
# `bytes.translate` deletes these to leave only continuation bytes (0x80-0xBF), or only the leads of
# 4-byte sequences (0xF0-0xF4): their counts, at C speed.
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)
_NOT_FOUR_BYTE_LEAD = bytes(b for b in range(256) if not 0xF0 <= b <= 0xF4)


def token_units_in_file(path, start: int, end: int) -> int:
    """The JS length of the raw bytes [start, end) of `path` (valid UTF-8, as a scan found them): one
    unit a byte, less the continuation bytes, plus one for each 4-byte sequence (a surrogate pair).
    For a JSON token written by JSON.stringify this is `JSON.stringify(text).length`. Read in pieces,
    never held whole; ValueError when the file can no longer be read or holds fewer bytes (the reader
    opened `path` already: it is read again the same way)."""
    units = 0
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it again: {exc.strerror or exc}") from None
    try:
        while start < end:
            try:
                piece = os.pread(fd, min(_TOKEN_PIECE, end - start), start)
            except OSError as exc:
                raise ValueError(f"{path}: cannot read it again: {exc.strerror or exc}") from None
            if not piece:
                raise ValueError(f"{path} changed since it was read")
            start += len(piece)
            units += len(piece)
            if not piece.isascii():
                units += len(piece.translate(None, _NOT_FOUR_BYTE_LEAD)) - len(piece.translate(None, _NOT_CONTINUATION))
    finally:
        os.close(fd)
    return units


class ShortenedLine:
    """A line whose long string values `scan_line` replaced by "": the copy to decode (`text`)
    and how its positions map back to the line's, for the values decoded from it."""

    __slots__ = ("text", "spans", "begin")

    def __init__(self, text: bytes, spans: tuple, begin: int):
        self.text, self.spans, self.begin = text, spans, begin  # spans: (at in text, start, end, units)

    def units_at(self, raw) -> int | None:
        """JS length of the replaced string `raw` (a "" decoded from `text`), None if it was not replaced."""
        at = offset_in(raw, self.text)
        for position, _, _, units in self.spans:
            if position == at:
                return units
        return None

    def position(self, at: int) -> int:
        """Where `text[at]` came from in the buffer (`at` outside every ""), or the end of a "" there."""
        shift = self.begin
        for position, start, end, _ in self.spans:
            if position >= at:
                break
            shift += end - start - 2
        return at + shift

    def span(self, raw) -> tuple[int, int]:
        """(start, end) in the buffer of a value decoded from `text`."""
        at = offset_in(raw, self.text)
        return self.position(at), self.position(at + len(raw))

    def long_string_at(self, start: int) -> tuple[int, int] | None:
        """(end, JS length) of the replaced string whose token starts at buffer[start], or None."""
        for _, begin, end, units in self.spans:
            if begin == start:
                return end, units
        return None


_compiled = compiled_module()
accelerated = _compiled is not None

# Both ways: the C function, else its exact pure-Python definition above.
valid_utf8 = _compiled.valid_utf8 if accelerated else py_valid_utf8
string_units = _compiled.string_units if accelerated else py_string_units
string_span = _compiled.string_span if accelerated else py_string_span
scan_line = _compiled.scan_line if accelerated else py_scan_line
scan_value = _compiled.scan_value if accelerated else py_scan_value
marked_lines = _compiled.marked_lines if accelerated else py_marked_lines

# C only (None without the module: callers take their exact path, which is faster than counting in
# Python): `offset_in`, where a msgspec.Raw sits in the buffer it was decoded from (callers search
# instead); `scan_record`, `scan_line` that also refuses (None) a line where msgspec reading the copy
# and orjson reading parts of the line could part from orjson reading it whole (a surrogate escape, an
# exponent, a 300-digit run, deep nesting); `copy_text_units(raw, text, spans)`, the JS lengths of the
# string values (keys left out) of a msgspec.Raw decoded from such a copy, the replaced strings counted
# at their lengths (None where a walk of the decoded value could count otherwise: a key given twice in
# one object, an escaped key); `copy_span(raw, text, spans, begin)`, where that value lies in the
# scanned buffer; `scan_records(buffer, start, stop, shorten)`, `scan_record` over every line of a
# chunk, for one msgspec `decode_lines` call: (copy, spans, table), see _rawjson.c.
offset_in = getattr(_compiled, "offset_in", None)
scan_record = getattr(_compiled, "scan_record", None)
scan_records = getattr(_compiled, "scan_records", None)
copy_text_units = getattr(_compiled, "copy_text_units", None)
copy_span = getattr(_compiled, "copy_span", None)
