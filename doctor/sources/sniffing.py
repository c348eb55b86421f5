"""What format detection sees of a file: its first bytes, and an outline of its first JSON values.

Sniffers decide from the first records' keys and short values. Those records may be huge (a user who
pasted a 640 KB log into the first prompt), longer than any fixed number of bytes read up front, so the
outline is read as a stream: objects keep every key, strings keep their first `KEEP_CHARS` characters,
arrays their first `KEEP_ITEMS` items, and everything else is skipped as it is scanned, never held in
memory. A value cut off by the end of the file (a torn line) or by the scan budget is outlined as far
as it goes; an invalid line is skipped to the next newline.

Past the head most records are short lines (a Codex rollout whose first record holds long instructions):
a line that ends within the chunk the scanner would read first, and that the stdlib parser reads as the
scanner would, is parsed whole and outlined from its value (`_outline`, the same outline); any other
goes to the scanner, which starts from that chunk. Container skipping (`_skip_value`) asks the C scan
(`rawjson.scan_value`) first where the chunk holds the whole container.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from doctor.core import rawjson
from doctor.sources.base import open_session_file
from doctor.sources.jsonl import loads

HEAD_BYTES = 64 * 1024
KEEP_CHARS = 256
# Enough raw JSON for KEEP_CHARS characters whatever their form: an escaped astral character
# (`\ud83d\ude00`) is 12 bytes for one character, the most any character takes.
_KEEP_BYTES = 12 * KEEP_CHARS
KEEP_ITEMS = 8
MAX_DEPTH = 8  # deeper values are skipped (outlined as None)
MAX_SCAN_BYTES = 64 << 20  # detection never reads more than this, whatever the file
CHUNK = 1 << 16

_STRING_STOP = re.compile(rb'["\\]')
# What a skipped container holds between its brackets: anything but quotes and brackets, and whole strings.
_SKIP_RUN = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+')
_TOKEN = re.compile(rb"-?[0-9][0-9.eE+-]*|true|false|null")
_WHITESPACE = b" \t\r\n"
_BLANK = re.compile(rb"[ \t\r\n]*")
_NEVER_SHORTEN = 1 << 62  # rawjson.scan_value's shortening threshold: no string is that long
_TOKEN_LOOKAHEAD = 400  # longer numbers are cut (their outline is then invalid: fine for sniffing)


SNIFF_VALUES = 50  # the most any sniffer looks at (Claude: a few records may precede the first message)


@dataclass
class Head:
    """The first `HEAD_BYTES` of a file, and (on demand) its first JSON values.

    Lines that end inside the head are parsed exactly; from the first line that runs past it on,
    values are outlined from a stream (see the module docstring). Values are read one at a time, as
    far as a sniffer asks: most decide on the first record, and a long record costs only itself.
    """

    path: Path
    bytes: bytes
    size: int
    _values: list = field(default_factory=list, repr=False)
    _offset: int = field(default=0, repr=False)  # next line in `bytes`, until a line runs past the head
    _stream_at: int | None = field(default=None, repr=False)  # then: where the next outlined value starts
    _scanned: int = field(default=0, repr=False)  # bytes the outlining has read so far (MAX_SCAN_BYTES)
    _ended: bool = field(default=False, repr=False)

    @classmethod
    def read(cls, path: Path) -> "Head":
        with open_session_file(path) as handle:
            head = handle.read(HEAD_BYTES)
            return cls(Path(path), head, os.fstat(handle.fileno()).st_size)

    def values(self, count: int) -> list:
        """The first `count` (at most SNIFF_VALUES) JSON values, one per non-blank line; None for an invalid
        line; fewer at the end of the file."""
        count = min(count, SNIFF_VALUES)
        while len(self._values) < count and not self._ended:
            self._next_value()
        return self._values[:count]

    def records(self, count: int) -> Iterator[dict]:
        """The JSON objects among the first `count` values, read as the caller goes."""
        for index in range(min(count, SNIFF_VALUES)):
            values = self.values(index + 1)
            if len(values) <= index:
                return
            if isinstance(values[index], dict):
                yield values[index]

    def _next_value(self) -> None:
        if self._stream_at is None:
            while self._offset < len(self.bytes):
                newline = self.bytes.find(b"\n", self._offset)
                if newline < 0 and len(self.bytes) < self.size:  # this line runs past the head: outline it
                    self._stream_at = self._offset
                    break
                end = len(self.bytes) if newline < 0 else newline
                line = self.bytes[self._offset:end].strip()
                self._offset = end + 1
                if line:
                    try:
                        self._values.append(loads(line))
                    except ValueError:
                        self._values.append(None)
                    return
            else:
                if len(self.bytes) == self.size:
                    self._ended = True
                    return
                self._stream_at = self._offset  # the head ended on a line's end, the file goes on
        with open_session_file(self.path) as handle:
            handle.seek(self._stream_at)
            budget = MAX_SCAN_BYTES - self._scanned
            chunk = handle.read(CHUNK) if budget > 0 else b""  # what the scanner's first fill reads
            line = _whole_line(chunk)
            if line is not None:
                self._values.append(_outline(line[0]))
                self._scanned += len(chunk)
                self._stream_at += line[1]
                return
            scanner = _Scanner(handle, budget, chunk)
            values = scanner.values(1)
            self._scanned += scanner.scanned
            self._stream_at += scanner.consumed()
        self._values += values
        self._ended = not values or scanner.ended


class _End(Exception):
    """The input (or the scan budget) ended inside a value."""


class _Invalid(Exception):
    """Not JSON at this point."""


def outline_values(handle: BinaryIO, count: int) -> list:
    """Outlines of the next `count` JSON values read from `handle`; None for an invalid line."""
    return _Scanner(handle).values(count)


class _Scanner:
    """A forward-only JSON scanner over a file, holding one chunk at a time."""

    def __init__(self, handle: BinaryIO, budget: int = MAX_SCAN_BYTES, read: bytes = b""):
        self.handle = handle  # `read`: the bytes already read from it (its first fill)
        self.budget = budget
        self.buffer = read
        self.at = 0
        self.scanned = len(read)
        self.ended = False  # the input (or the budget) ended inside a value, or after the last one
        self.roots: list = []  # containers being filled, outermost first: what a cut-off value outlines to

    def values(self, count: int) -> list:
        values = []
        while len(values) < count:
            if not self.skip_whitespace():
                self.ended = True
                break
            self.roots = []
            try:
                values.append(self.value(0))
            except _Invalid:
                values.append(None)
                self.skip_line()
            except _End:
                values.append(self.roots[0] if self.roots else None)
                self.ended = True
                break
        return values

    def consumed(self) -> int:
        """Bytes of the input behind the cursor."""
        return self.scanned - (len(self.buffer) - self.at)

    # --- bytes -------------------------------------------------------------------------------
    def _fill(self) -> bool:
        if self.scanned >= self.budget:
            return False
        more = self.handle.read(CHUNK)
        if not more:
            return False
        self.scanned += len(more)
        self.buffer = self.buffer[self.at:] + more
        self.at = 0
        return True

    def peek(self) -> int:
        if self.at >= len(self.buffer) and not self._fill():
            raise _End
        return self.buffer[self.at]

    def skip_whitespace(self) -> bool:
        """Move to the next non-whitespace byte; False at the end of the input."""
        while True:
            while self.at < len(self.buffer) and self.buffer[self.at] in _WHITESPACE:
                self.at += 1
            if self.at < len(self.buffer):
                return True
            if not self._fill():
                return False

    def skip_line(self) -> None:
        while (newline := self.buffer.find(b"\n", self.at)) < 0:
            self.at = len(self.buffer)
            if not self._fill():
                return
        self.at = newline + 1

    def expect(self, byte: bytes) -> None:
        self._skip_ws_in_value()
        if self.peek() != byte[0]:
            raise _Invalid
        self.at += 1

    def _skip_ws_in_value(self) -> None:
        if not self.skip_whitespace():
            raise _End

    # --- values ------------------------------------------------------------------------------
    def value(self, depth: int):
        self._skip_ws_in_value()
        if depth > MAX_DEPTH:
            self._skip_value()
            return None
        first = self.peek()
        if first == ord("{"):
            return self._object(depth)
        if first == ord("["):
            return self._array(depth)
        if first == ord('"'):
            return self.string()
        return self._token()

    def _object(self, depth: int):
        self.at += 1
        outline: dict = {}
        self.roots.append(outline)
        self._skip_ws_in_value()
        if self.peek() == ord("}"):
            self.at += 1
            return outline
        while True:
            self._skip_ws_in_value()
            if self.peek() != ord('"'):
                raise _Invalid
            key = self.string()
            self.expect(b":")
            outline[key] = self.value(depth + 1)
            self._skip_ws_in_value()
            separator = self.peek()
            self.at += 1
            if separator == ord("}"):
                return outline
            if separator != ord(","):
                raise _Invalid

    def _array(self, depth: int):
        self.at += 1
        outline: list = []
        self.roots.append(outline)
        self._skip_ws_in_value()
        if self.peek() == ord("]"):
            self.at += 1
            return outline
        while True:
            if len(outline) < KEEP_ITEMS:
                outline.append(self.value(depth + 1))
            else:
                self._skip_value()
            self._skip_ws_in_value()
            separator = self.peek()
            self.at += 1
            if separator == ord("]"):
                return outline
            if separator != ord(","):
                raise _Invalid

    def string(self) -> str:
        """The string at the cursor (its first KEEP_CHARS characters); the rest is scanned past."""
        self.at += 1
        kept = bytearray()
        while len(kept) < _KEEP_BYTES:  # escape by escape, so that what is kept decodes
            stop = _STRING_STOP.search(self.buffer, self.at)
            end = stop.start() if stop else len(self.buffer)
            kept += self.buffer[self.at:end]
            self.at = end
            if stop is None:
                if not self._fill():
                    raise _End
                continue
            if self.buffer[end] == ord('"'):
                self.at += 1
                return _decode_prefix(bytes(kept))
            if end + 1 >= len(self.buffer) and not self._fill():  # a backslash: keep the escape whole
                raise _End
            kept += self.buffer[self.at:self.at + 2]
            self.at += 2
        self._skip_to_closing_quote()
        return _decode_prefix(bytes(kept))

    def _skip_to_closing_quote(self) -> None:
        """From a position outside any escape, past the first quote preceded by an even run of backslashes."""
        while True:
            quote = self.buffer.find(b'"', self.at)
            if quote < 0:
                self.at = len(self.buffer) - _backslashes_before(self.buffer, len(self.buffer), self.at)
                if not self._fill():  # (a trailing run of backslashes is counted again with the next chunk)
                    raise _End
                continue
            escaped = _backslashes_before(self.buffer, quote, self.at) % 2
            self.at = quote + 1
            if not escaped:
                return

    def _skip_value(self) -> None:
        """Scan past one value without outlining it, however deep (no recursion).

        Inside a container only brackets and strings are looked at, by one regular expression; what lies
        between them is never outlined, so it is not checked: a dump's 5 MB one-line document is skipped
        in milliseconds, not seconds."""
        self._skip_ws_in_value()
        byte = self.peek()
        if byte == ord('"'):
            self.at += 1
            self._skip_to_closing_quote()
            return
        if byte not in b"[{":
            self._token()  # (a stray `]`, `}`, `,` or `:` is no token: _Invalid)
            return
        if rawjson.accelerated:  # a container the chunk holds whole, as the C scan follows it: its end at once
            scanned = rawjson.scan_value(self.buffer, self.at, len(self.buffer), _NEVER_SHORTEN)
            if scanned is not None:
                self.at = scanned[0]
                return
        self.at += 1
        depth = 1
        while depth:
            self.at = _SKIP_RUN.match(self.buffer, self.at).end()  # past scalars, separators, whole strings
            if self.at >= len(self.buffer):
                if not self._fill():
                    raise _End
                continue
            byte = self.buffer[self.at]
            self.at += 1
            if byte == ord('"'):  # a string the chunk cuts
                self._skip_to_closing_quote()
            elif byte in b"[{":
                depth += 1
            else:
                depth -= 1

    def _token(self):
        while len(self.buffer) - self.at < _TOKEN_LOOKAHEAD and self._fill():
            pass  # a number or literal cut by the chunk's end goes on in the next one
        match = _TOKEN.match(self.buffer, self.at)
        if not match:
            raise _Invalid
        self.at = match.end()
        try:
            return json.loads(match.group())
        except ValueError:
            raise _Invalid from None


def _whole_line(chunk: bytes) -> tuple[object, int] | None:
    """(value, bytes up to and with its newline) of the next line of `chunk` holding a value (past the
    newline the last value ended at, and blank lines), when the chunk holds it whole (or it ends the
    file) and the stdlib parser reads it as the scanner would: a single value, no NaN or Infinity (no
    token for the scanner), nothing the parser refuses. None: let the scanner read."""
    start = _BLANK.match(chunk).end()
    newline = chunk.find(b"\n", start)
    if newline < 0 and len(chunk) == CHUNK:
        return None  # the line goes on past the chunk
    end = len(chunk) if newline < 0 else newline
    if start == end:
        return None  # nothing but whitespace to the end of the file
    try:
        # decoded here, strictly: json.loads would guess UTF-16 or skip a BOM in bytes, where the scanner does not
        return json.loads(chunk[start:end].decode(), parse_constant=_no_constant), end + 1
    except (ValueError, RecursionError):
        return None


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _outline(value, depth: int = 0):
    """What the scanner outlines of `value` (an exact parse): strings and keys cut to KEEP_CHARS, arrays to
    KEEP_ITEMS items, nothing below MAX_DEPTH (tests/sources/test_detection.py holds the two equal)."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {key[:KEEP_CHARS]: _outline(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_outline(item, depth + 1) for item in value[:KEEP_ITEMS]]
    if isinstance(value, str):
        return value[:KEEP_CHARS]
    return value


def _backslashes_before(buffer: bytes, end: int, start: int) -> int:
    """How many backslashes directly precede `end`, not looking before `start`."""
    at = end
    while at > start and buffer[at - 1] == 0x5C:
        at -= 1
    return end - at


def _decode_prefix(raw: bytes) -> str:
    """A JSON string's raw bytes (possibly cut short) as text, its first KEEP_CHARS characters."""
    for cut in range(len(raw), max(len(raw) - 8, -1), -1):  # back off a cut escape or UTF-8 sequence
        try:
            return json.loads(b'"' + raw[:cut] + b'"')[:KEEP_CHARS]
        except ValueError:
            continue
    return raw.decode("utf-8", "replace")[:KEEP_CHARS]
