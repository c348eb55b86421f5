"""The C accelerator's line scan and counters agree with their exact pure-Python definitions.

`scan_line` is what lets the Qwen reader hand msgspec a line without its long
strings: it must accept exactly the strings JSON.parse accepts (valid UTF-8, no raw
control character, the eight escapes and \\uXXXX, lone surrogate escapes included),
measure them as JavaScript does, and say where they were. The reference here walks
the line with the pure-Python token regex and `py_string_units` (orjson, else the
stdlib), so a disagreement on any generated line is a bug in the C module. Lines mix
tricky text (escapes straddling the 64-byte blocks, astral and CJK characters, lone
surrogates), repeated tokens (the scan compares those instead of scanning them) and
corruptions (invalid UTF-8, bad escapes, raw controls, torn tokens).

`scan_value` is the same scan for one value inside a bigger buffer (a legacy Gemini
document's message): it must end where the pure `py_scan_value` finds the value's end,
give `scan_line`'s copy of that value, its nesting depth, and say whether a string holds
a lone surrogate escape exactly when orjson refuses one of its (valid) strings.
`scan_record` is `scan_line` refusing also what msgspec and orjson could read differently;
`copy_text_units` and `copy_span` measure and find values decoded from its copies.
`marked_lines` (the spill audit's one pass for the lines holding a marker, and the newline count)
must give `py_marked_lines`' lines and count on every recording, cut in runs of lines of any size,
and on buffers of marker pieces with any markers.
Every compiled variant this machine can run is checked (generic, popcnt, AVX2: `_use_variant`).
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import re

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core import rawjson

if not rawjson.accelerated:
    if os.environ.get("CI"):
        pytest.fail("the C accelerator was not built (setup.py's optional extension)", pytrace=False)
    pytest.skip("the C accelerator is not built here", allow_module_level=True)

import orjson  # noqa: E402

from doctor.core import _rawjson  # noqa: E402
from doctor.core._rawjson import (  # noqa: E402
    copy_span, copy_text_units, marked_lines, scan_line, scan_record, scan_value, string_units)
from doctor.sources.claude_codex_common import text_chars  # noqa: E402
from doctor.spill.marker_scan import MARKERS  # noqa: E402
from tests.report.report_support import all_sources, source_id  # noqa: E402

FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@pytest.fixture(autouse=True, params=["generic", "popcnt", "avx2"])
def variant(request):
    """Each test once per compiled variant of the counters and the line scan."""
    if not _rawjson._use_variant(request.param):
        pytest.skip(f"no {request.param} variant on this machine")
    yield request.param
    _rawjson._use_variant("best")

_WHITESPACE = b" \t\n\r"


def reference_scan(buffer: bytes, start: int, stop: int, shorten: int):
    """`scan_line`, from the pure definitions."""
    spans, pieces, at, i = [], [], start, start
    while i < stop:
        if buffer[i] != 0x22:
            if buffer[i] >= 0x80:
                return None
            i += 1
            continue
        match = rawjson._TOKEN.match(buffer, i, stop)
        if match is None:
            return None
        end = match.end()
        units = rawjson.py_string_units(buffer[i:end])
        if units is None:
            return None
        after = end
        while after < stop and buffer[after] in _WHITESPACE:
            after += 1
        if end - i >= shorten and not (after < stop and buffer[after] == 0x3A):
            pieces.append(buffer[at:i])
            spans.append((sum(map(len, pieces)), i, end, units))
            pieces.append(b'""')
            at = end
        i = end
    if not spans:
        return None, ()
    pieces.append(buffer[at:stop])
    return b"".join(pieces), tuple(spans)


_TEXT = st.lists(
    st.sampled_from(list('ab "\\/\n\t\r\b\f\x00\x1b\x7fué中😀\ud800\udc00') + ["\u2028", "\\u", "\\\\\\"]),
    max_size=300,
).map("".join)
_CORRUPTIONS = [b"\\", b'"', b"\x00", b"\x1f", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\\u12",
                b"\\x", b"\xf0\x9f\x98", b"\x80", b"\\\\"]


@st.composite
def lines(draw):
    """A JSON-object-like line: keys, string values (some repeated), numbers, maybe corrupted."""
    tokens = []
    for _ in range(draw(st.integers(1, 6))):
        text = "a" * draw(st.integers(0, 140)) + draw(_TEXT)  # padding moves escapes across block edges
        token = json.dumps(text, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
        if draw(st.integers(0, 4)) == 0:
            at = draw(st.integers(0, len(token)))
            token = token[:at] + draw(st.sampled_from(_CORRUPTIONS)) + token[at:]
        tokens.append(token)
    if draw(st.booleans()):
        tokens.append(draw(st.sampled_from(tokens)))  # a shell display's second copy
    key = json.dumps("k" * draw(st.sampled_from([1, 300]))).encode()  # a long key is never shortened
    body = b",".join(b'"%d"%s:%s' % (n, b" " if n % 2 else b"", t) for n, t in enumerate(tokens))
    return b"{" + key + b":1," + body + b"}"


@settings(max_examples=600, suppress_health_check=FIXTURE_OK)
@given(line=lines(), shorten=st.sampled_from([2, 40, 256]), pad=st.integers(0, 70))
def test_scan_line_agrees_with_the_pure_definition(line: bytes, shorten: int, pad: int) -> None:
    buffer = b"x" * pad + line + b"\ntail"  # a line inside a bigger buffer, as the reader's mmap gives it
    assert scan_line(buffer, pad, pad + len(line), shorten) == reference_scan(buffer, pad, pad + len(line), shorten)


@settings(max_examples=400, suppress_health_check=FIXTURE_OK)
@given(text=_TEXT, ascii_only=st.booleans(), pad=st.integers(0, 140))
def test_string_units_agree_with_the_pure_definition(text: str, ascii_only: bool, pad: int) -> None:
    token = json.dumps("é" * pad + text, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    expected = rawjson.py_string_units(token)
    if expected is not None:  # the C counter trusts its input: only valid tokens are compared
        assert string_units(token) == expected


def test_scan_line_refuses_what_json_refuses() -> None:
    """A few named cases, so a failure reads plainly."""
    for bad in (b'{"a":"\xff"}', b'{"a":"\\q"}', b'{"a":"\x01"}', b'{"a":"\\u12"}', b'{"a":"open}', b'{"a":\xc3\xa9}',
                b'{"a":"\xed\xa0\x80"}'):
        assert scan_line(bad, 0, len(bad), 2) is None, bad
    good = b'{"a":"\\ud800\\u00e9\xf0\x9f\x98\x80\\n"}'
    assert scan_line(good, 0, len(good), 2) == (b'{"a":""}', ((5, 5, len(good) - 1, 5),))


_STRING_OR_OTHER = re.compile(rb'"(?:[^"\\]|\\.)*"|[^"]+', re.DOTALL)


def reference_record(buffer: bytes, start: int, stop: int, shorten: int):
    """`scan_record`: `reference_scan`, refused also for a string orjson refuses (a lone surrogate escape:
    `reference_scan` checked the rest), a number with an exponent or of 300 digits in a row, nesting
    deeper than 256 outside strings, or a line that is not one bracketed value: anything but whitespace
    and one opening bracket outside it (brackets counted, not matched), or left open."""
    scanned = reference_scan(buffer, start, stop, shorten)
    if scanned is None:
        return None
    depth, closed = 0, False
    for piece in _STRING_OR_OTHER.findall(buffer[start:stop]):
        if piece.startswith(b'"'):
            if orjson_refuses(piece) or depth == 0:
                return None
            continue
        if re.search(rb"[0-9][eE]|[0-9]{300}", piece):
            return None
        for byte in piece:
            if depth == 0 and (byte not in b" \t\r{[" or (byte in b"{[" and closed)):
                return None
            depth += byte in b"{[" and 1 or -(byte in b"}]")
            closed = closed or depth == 0 and byte in b"}]"
            if depth > 256:
                return None
    return scanned if depth == 0 and closed else None


_NUMBERS = [b"0", b"-12", b"3.25", b"1e5", b"-2.5E-3", b"7E+2", b"9" * 299, b"9" * 300, b"1" + b"0" * 320,
            b"true", b"false", b"null"]


# Around a line's one value: nothing, whitespace, or what makes it more or less than one value.
_AROUND = [b"", b" ", b"\t\r", b"{}", b"[]", b"}", b"]", b"{", b"null", b"7", b'"s"', b" {} ", b"[1]{"]


@settings(max_examples=600, suppress_health_check=FIXTURE_OK)
@given(line=lines(), number=st.sampled_from(_NUMBERS), depth=st.sampled_from([0, 1, 255, 256, 257]),
       shorten=st.sampled_from([2, 40, 256]), pad=st.integers(0, 70),
       before=st.sampled_from(_AROUND), after=st.sampled_from(_AROUND))
def test_scan_record_agrees_with_the_pure_definition(line: bytes, number: bytes, depth: int, shorten: int,
                                                      pad: int, before: bytes, after: bytes) -> None:
    line = before + line[:-1] + b',"n":' + b"[" * depth + number + b"]" * depth + b"}" + after
    buffer = b"x" * pad + line + b"\ntail"
    assert scan_record(buffer, pad, pad + len(line), shorten) == reference_record(buffer, pad, pad + len(line), shorten)


class _Fields(msgspec.Struct):
    a: msgspec.Raw = msgspec.Raw()
    b: msgspec.Raw = msgspec.Raw()


_VALUES = st.recursive(
    st.one_of(st.none(), st.integers(-10, 10), _TEXT,
              st.builds(lambda n, t: "x" * n + t, st.integers(200, 400), _TEXT)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["k", "x" * 300, ":"]), inner,
                                                                          max_size=4)),
    max_leaves=12,
)


@settings(max_examples=400, suppress_health_check=FIXTURE_OK)
@given(a=_VALUES, b=_VALUES, shorten=st.sampled_from([2, 40, 256]), ascii_only=st.booleans())
def test_values_decoded_from_a_copy_are_measured_and_found_in_the_line(a, b, shorten: int, ascii_only: bool) -> None:
    """`copy_text_units` gives `text_chars` of the value as the line holds it, `copy_span` its bytes."""
    line = json.dumps({"a": a, "z": [a, b], "b": b}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    scanned = scan_record(line, 0, len(line), shorten)
    if scanned is None:  # a surrogate, escaped or written raw (not UTF-8): the readers' exact path
        return
    text, spans = scanned
    if text is None:
        text = line
    decoded = msgspec.json.decode(text, type=_Fields)
    for raw, value in ((decoded.a, a), (decoded.b, b)):
        assert copy_text_units(raw, text, spans) == text_chars(value)
        start, end = copy_span(raw, text, spans, 0)
        assert _as_js(json.loads(line[start:end].decode("utf-8", "surrogatepass"))) == _as_js(value)


def _as_js(value):
    """The value with each string as its UTF-16 code units, as JavaScript holds it: a surrogate pair
    written as two escapes decodes to one astral character, the same JS string as the two surrogates."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass")
    if isinstance(value, list):
        return [_as_js(item) for item in value]
    if isinstance(value, dict):
        return {_as_js(key): _as_js(item) for key, item in value.items()}
    return value


def test_copy_text_units_gives_up_where_the_decoded_value_could_count_otherwise() -> None:
    """A key given twice in one object (JSON.parse keeps the last value) or written with an escape (it
    could repeat another) gives None; the same key in two objects is counted."""
    for value, expected in ((b'{"k":"ab","k":"c"}', None), (b'{"\\u006b":"ab","k":"c"}', None),
                            (b'[{"k":"ab"},{"k":"c"}]', 3), (b'{"k":{"k":"ab"},"j":"c"}', 3)):
        line = b'{"a":' + value + b"}"
        decoded = msgspec.json.decode(line, type=_Fields)
        assert copy_text_units(decoded.a, line, ()) == expected, value


def test_copy_functions_refuse_a_value_from_elsewhere() -> None:
    with pytest.raises(ValueError):
        copy_text_units(b'"x"', b'{"a":"x"}', ())
    with pytest.raises(TypeError):
        copy_span(msgspec.Raw(b"1"), b"1", ((0, 0, 2),), 0)



def test_a_scan_range_outside_the_buffer_is_clamped_to_it() -> None:
    """start past stop, stop past the end or below 0: every scan reads the empty range where it falls,
    as a slice would (scan_records sized its copy from stop - start and gave no copy at all)."""
    buffer = b'{"a":1}\n' * 100
    rows = lambda table: memoryview(table).cast("n").tolist()  # noqa: E731
    for start, stop, at in ((500, 10, 10), (0, -5, 0), (2000, 5000, len(buffer))):
        assert scan_line(buffer, start, stop, 256) == (None, ())
        assert scan_record(buffer, start, stop, 256) is None  # no value at all: the exact path's
        copy, spans, table = _rawjson.scan_records(buffer, start, stop, 256)
        assert (copy, spans, rows(table)) == (b"", (), [at, 0, 0]), (start, stop)

@st.composite
def values(draw):
    """A JSON value (objects and arrays of lines' strings, nested), maybe corrupted, with bytes after it."""
    depth = draw(st.integers(0, 4))
    value = draw(lines()) if draw(st.booleans()) else json.dumps(draw(_TEXT)).encode()
    for _ in range(depth):
        value = draw(st.sampled_from([b"[%s]", b'{"k":%s, "n":[1,{}]}', b"[ 1 ,\n %s ]"])) % value
    if draw(st.integers(0, 5)) == 0:
        value = value[: draw(st.integers(0, len(value)))]  # torn: no end, or a different one
    return value + draw(st.sampled_from([b"", b",", b"]", b'"x"', b" }\n{}"]))


def _strings(buffer: bytes, start: int, stop: int):
    """The string tokens of buffer[start:stop] (a value scan_value accepted)."""
    i = start
    while i < stop:
        if buffer[i] == 0x22:
            token = rawjson._TOKEN.match(buffer, i, stop).group()
            yield token
            i += len(token)
        else:
            i += 1


@settings(max_examples=600, suppress_health_check=FIXTURE_OK)
@given(value=values(), shorten=st.sampled_from([2, 40, 256]), pad=st.integers(0, 70))
def test_scan_value_agrees_with_the_pure_definitions(value: bytes, shorten: int, pad: int) -> None:
    buffer = b"x" * pad + value + b"\ntail"
    scanned = scan_value(buffer, pad, len(buffer), shorten)
    pure = rawjson.py_scan_value(buffer, pad, len(buffer), shorten)
    if pure is None:
        assert scanned is None
        return
    end, _, _, deepest, _ = pure
    expected = reference_scan(buffer, pad, end, shorten)
    if expected is None:
        assert scanned is None
        return
    lone = any(orjson_refuses(token) for token in _strings(buffer, pad, end))
    assert scanned == (end, *expected, deepest, lone)


def orjson_refuses(token: bytes) -> bool:
    try:
        orjson.loads(token)
    except orjson.JSONDecodeError:
        return True
    return False


def test_scan_value_named_cases() -> None:
    """A string, nesting, a value that never ends, bytes after the end, lone and paired surrogates."""
    assert scan_value(b' "ab" x', 1, 7, 2) == (5, b'""', ((0, 1, 5, 2),), 0, False)
    assert scan_value(b'[{"a":[]},"]"] tail', 0, 19, 100) == (14, None, (), 3, False)
    assert scan_value(b'[{"a":[]}', 0, 9, 100) is None
    assert scan_value(b"  [1]", 0, 5, 100) is None  # it must open at `start`
    for text, lone in ((b"\\ud83d\\ude00", False), (b"\\ud800", True), (b"\\udc00", True),
                       (b"\\ud800\\ud800", True), (b"\\ud800\\\\udc00", True), (b"\\ud800x\\udc00", True),
                       (b"\\uD83D\\uDE00", False), (b"\\udbff\\udfff", False)):
        token = b'["' + text + b'"]'
        assert scan_value(token, 0, len(token), 100)[4] is lone, text
        assert orjson_refuses(token[1:-1]) is lone


# -- marked_lines: the spill audit's pass for the lines holding a marker, and the newline count

def _line_regions(buffer: bytes, size: int):
    """(start, stop) of runs of whole lines of about `size` bytes, as the marker scan hands them over."""
    start = 0
    while start < len(buffer):
        newline = buffer.find(b"\n", min(start + size, len(buffer)) - 1)
        stop = len(buffer) if newline < 0 else newline + 1
        yield start, stop
        start = stop


@pytest.mark.parametrize("path", all_sources(), ids=source_id)
def test_marked_lines_agree_with_the_pure_definition_on_every_recording(path) -> None:
    buffer = path.read_bytes()
    for size in (len(buffer) or 1, 4096, 61, 1):
        for start, stop in _line_regions(buffer, size):
            assert marked_lines(buffer, start, stop, MARKERS) == rawjson.py_marked_lines(buffer, start, stop, MARKERS)


_MARKER_BYTES = st.binary(min_size=1, max_size=70).map(lambda b: b.replace(b"\n", b"n"))


@st.composite
def marked_buffers(draw):
    """Markers (the spill audit's, or any) and a buffer of their pieces: whole markers, their heads and
    tails, newlines, CRLFs, long plain runs that move everything across the 64-byte blocks."""
    markers = MARKERS if draw(st.booleans()) else tuple(draw(st.lists(_MARKER_BYTES, max_size=rawjson.MAX_MARKERS)))
    marker = st.sampled_from(markers) if markers else st.just(b"x")
    piece = st.one_of(
        marker, marker.map(lambda m: m[: len(m) // 2]), marker.map(lambda m: m[len(m) // 2 :]),
        st.sampled_from([b"\n", b"\r\n", b"\n\n", b'"', b"\\n"]), st.integers(1, 200).map(lambda n: b"a" * n),
        st.binary(max_size=40),
    )
    return markers, b"".join(draw(st.lists(piece, max_size=30)))


@settings(max_examples=800, suppress_health_check=FIXTURE_OK)
@given(case=marked_buffers(), start=st.integers(0, 1 << 16), stop=st.integers(0, 1 << 16))
def test_marked_lines_agree_with_the_pure_definition(case, start: int, stop: int) -> None:
    markers, buffer = case
    start %= len(buffer) + 1
    stop = start + stop % (len(buffer) - start + 1)
    assert marked_lines(buffer, start, stop, markers) == rawjson.py_marked_lines(buffer, start, stop, markers)


def test_marked_lines_named_cases() -> None:
    """Markers at either end, cut by `stop`, across every block edge; CR kept; bad markers refused."""
    assert marked_lines(b"saved to", 0, 8, MARKERS) == ([(0, 8)], 0)
    assert marked_lines(b"saved to", 0, 7, MARKERS) == ([], 0)
    assert marked_lines(b"x\r\nsaved to\r\n", 0, 13, MARKERS) == ([(3, 12)], 2)
    assert marked_lines(b"\n\nsaved to\n", 2, 11, MARKERS) == ([(2, 10)], 1)
    assert marked_lines(b"abc", 2, 1, MARKERS) == ([], 0)
    for at in range(200):
        buffer = b"a" * at + b"\n" + b"b" * (150 - at % 150) + b"autobot:spill:" + b"c" * at + b"\n" * 3
        begin = at + 1
        expected = ([(begin, buffer.index(b"\n", begin))], 4)
        assert marked_lines(buffer, 0, len(buffer), MARKERS) == expected == rawjson.py_marked_lines(
            buffer, 0, len(buffer), MARKERS)
    for bad in ((b"",), (b"a\nb",), (b"x",) * (rawjson.MAX_MARKERS + 1)):
        with pytest.raises(ValueError):
            marked_lines(b"abc", 0, 3, bad)
        with pytest.raises(ValueError):
            rawjson.py_marked_lines(b"abc", 0, 3, bad)


def test_marked_lines_read_nothing_past_stop() -> None:
    """Buffers that end where an unreadable page begins: a read past `stop` would crash the test run."""
    page = mmap.PAGESIZE
    region = mmap.mmap(-1, 3 * page)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    assert libc.mprotect(address + 2 * page, page, 0) == 0  # PROT_NONE
    try:
        view = memoryview(region)
        for size in range(0, 200):
            marker = b"autobot:spill:"[: 14 - size % 2]  # whole, or cut by the end
            buffer = b"ab\n" * 100 + (b"x" * size + marker)[-size:] if size else b""
            start = 2 * page - len(buffer)
            view[start : 2 * page] = buffer
            found = marked_lines(view[: 2 * page], start, 2 * page, MARKERS)
            assert found == rawjson.py_marked_lines(bytes(view[: 2 * page]), start, 2 * page, MARKERS)
        view.release()
    finally:
        libc.mprotect(address + 2 * page, page, 3)  # PROT_READ | PROT_WRITE, so the map can be closed
        region.close()
