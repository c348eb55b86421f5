"""Mutations of real session files, as data: a `Case` names a committed recording and the edits made to it.

Every edit is a plain tuple of integers and bytes, applied modulo the file's
size, so any edit fits any file; Hypothesis draws and shrinks them, and a
regression case is written down as a literal `Case` (see the fuzzer's
`@example`s). What the edits cover is what a torn, copied, concatenated or
hostile file looks like: flipped and NUL bytes, a cut at any byte, duplicated,
swapped and deleted lines, garbage lines, values nested 100,000 deep, huge
numbers and exponents, CRLF line ends, a BOM, truncated UTF-8 sequences,
another session's lines spliced in, markup and terminal escapes in tool names and
file names, and a sparse run of NUL bytes after the file (what a crash leaves) up to
past the line cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from doctor.sources.jsonl import LINE_CAP

from tests.report.report_support import RECORDINGS, all_sources, source_id

SOURCES: tuple[Path, ...] = tuple(all_sources())
SOURCE_IDS: tuple[str, ...] = tuple(source_id(path) for path in SOURCES)

HUGE_NUMBERS = (b"1e999999", b"-1E-99999", b"9" * 400, b"1.7976931348623157e309", b"-0", b"0.0000000000000000000001e-400",
                b"123456789012345678901234567890", b"NaN", b"Infinity", b"-", b"1.", b"01")
TRUNCATED_UTF8 = (b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3", b"\xed\xa0\x80", b"\xff\xfe", b"\x80\x80")
# Text a screen or terminal would act on, as it sits inside a JSON string: Rich/Textual markup (style, an
# action, a closing tag that matches nothing), OSC 52 (clipboard), a screen clear, BEL, a bidi override.
HOSTILE_TEXT = (b"[bold red]x[/]", b"[@click=app.quit]q", b"[/nope]", b"\\u001b]52;c;aGk=\\u0007",
                b"\\u001b[2J", b"\\u0007", b"\\u202eevil")
# The same in a file name (no "/"), raw.
HOSTILE_NAMES = ("[bold red]x", "[@click=app.quit]q", "\x1b[31mred", "\u202eevil", "\x07bell")
# NUL bytes after the file, written sparse: a run decoded as one junk line, and one past the line cap.
SPARSE_TAILS = (1 << 20, LINE_CAP + 1)


@dataclass(frozen=True)
class Case:
    """One recording (by its id under tests/recordings or tests/fixtures/public) and the edits made to it."""

    source: str
    edits: tuple[tuple, ...]

    def __repr__(self) -> str:
        """Short enough for an assertion message: long byte strings are shown by their start and size."""
        def shown(value):
            if isinstance(value, bytes) and len(value) > 48:
                return f"{value[:24]!r}…({len(value):,} bytes)"
            return repr(value)
        edits = ", ".join("(" + ", ".join(shown(v) for v in edit) + ")" for edit in self.edits)
        return f"Case({self.source!r}, ({edits}))"

    @property
    def path(self) -> Path:
        return SOURCES[SOURCE_IDS.index(self.source)]

    def relative(self) -> Path:
        """Where the mutated copy goes under a scratch folder: the recording's own relative path, its
        file name with any hostile text a `filename` edit adds before its suffix."""
        path = Path(self.source)
        added = "".join(edit[1] for edit in self.edits if edit[0] == "filename")
        return path.with_name(f"{path.stem}{added}{path.suffix}") if added else path

    @property
    def sparse_tail(self) -> int:
        """NUL bytes to add after `data()`, sparse (the writer truncates the file up: never in memory)."""
        return sum(edit[1] for edit in self.edits if edit[0] == "sparse")

    def data(self) -> bytes:
        data = self.path.read_bytes()
        for edit in self.edits:
            data = apply(data, edit)
        return data

    def write(self, target: Path) -> Path:
        """The mutated file at `target`, its sparse tail included."""
        target.write_bytes(self.data())
        if self.sparse_tail:
            with open(target, "r+b") as handle:
                handle.truncate(target.stat().st_size + self.sparse_tail)
        return target


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _deep(depth: int, wrapped: bool) -> bytes:
    value = b"[" * depth + b"]" * depth
    return (b'{"type":"user","message":' + value + b"}" if wrapped else value) + b"\n"


def _number(line: bytes, text: bytes) -> bytes:
    """The line with its first run of digits replaced by `text` (or `text` appended as a value if it has none)."""
    for start, byte in enumerate(line):
        if 0x30 <= byte <= 0x39:
            end = start
            while end < len(line) and 0x30 <= line[end] <= 0x39:
                end += 1
            return line[:start] + text + line[end:]
    return line.rstrip(b"\r\n") + text + b"\n"


def apply(data: bytes, edit: tuple) -> bytes:
    """`data` with one edit made; positions and line numbers wrap around, so every edit applies to every file."""
    kind, *args = edit
    if kind in ("filename", "sparse"):  # applied where the file is named and written
        return data
    if kind == "markup":  # hostile text inside the n-th tool name (else the n-th string)
        key = b'"name":"' if b'"name":"' in data else b'"'
        count = data.count(key)
        at, found = -1, 0
        while found <= args[0] % max(count, 1):
            at = data.find(key, at + 1)
            found += 1
        at = (at + len(key)) if at >= 0 else len(data)
        return data[:at] + args[1] + data[at:]
    size = max(len(data), 1)
    if kind == "flip":
        at = args[0] % size
        return data[:at] + bytes([(data[at:at + 1] or b"\0")[0] ^ (args[1] or 1)]) + data[at + 1:]
    if kind == "cut":
        return data[: args[0] % (len(data) + 1)]
    if kind == "insert":  # NUL bytes, truncated UTF-8, any bytes, at any byte
        at = args[0] % (len(data) + 1)
        return data[:at] + args[1] + data[at:]
    if kind == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    lines = _lines(data)
    count = len(lines)
    if kind == "dup":
        i = args[0] % count
        return b"".join(lines[: i + 1] + lines[i:])
    if kind == "delete":
        i = args[0] % count
        return b"".join(lines[:i] + lines[i + 1:])
    if kind == "swap":
        i, j = args[0] % count, args[1] % count
        lines[i], lines[j] = lines[j], lines[i]
        return b"".join(lines)
    if kind == "line":  # a garbage or deeply nested line inserted before line i
        return b"".join(lines[: args[0] % (count + 1)] + [args[1]] + lines[args[0] % (count + 1):])
    if kind == "number":
        i = args[0] % count
        return b"".join(lines[:i] + [_number(lines[i], args[1])] + lines[i + 1:])
    if kind == "splice":  # a run of another recording's lines
        other = _lines(SOURCES[args[0] % len(SOURCES)].read_bytes())
        start = args[1] % len(other)
        at = args[3] % (count + 1)
        return b"".join(lines[:at] + other[start:start + 1 + args[2] % 8] + lines[at:])
    raise ValueError(f"unknown edit {kind!r}")


_position = st.integers(min_value=0, max_value=2**31)

EDITS = st.one_of(
    st.tuples(st.just("flip"), _position, st.integers(0, 255)),
    st.tuples(st.just("cut"), _position),
    st.tuples(st.just("insert"), _position, st.sampled_from((b"\0", b"\0\0\0\n", *TRUNCATED_UTF8))),
    st.tuples(st.just("insert"), _position, st.binary(min_size=1, max_size=40)),
    st.tuples(st.just("crlf")),
    st.tuples(st.just("bom")),
    st.tuples(st.just("dup"), _position),
    st.tuples(st.just("delete"), _position),
    st.tuples(st.just("swap"), _position, _position),
    st.tuples(st.just("line"), _position, st.binary(max_size=200).map(lambda b: b + b"\n")),
    st.tuples(st.just("line"), _position, st.sampled_from((b"{}\n", b"[]\n", b"null\n", b'"x"\n', b"{\n", b"}\n",
                                                          b'{"type":null}\n', b'{"message":{"content":7}}\n'))),
    st.tuples(st.just("line"), _position, st.builds(_deep, st.sampled_from((1_000, 100_000)), st.booleans())),
    st.tuples(st.just("number"), _position, st.sampled_from(HUGE_NUMBERS)),
    st.tuples(st.just("splice"), _position, _position, _position, _position),
    st.tuples(st.just("markup"), _position, st.sampled_from(HOSTILE_TEXT)),
    st.tuples(st.just("filename"), st.sampled_from(HOSTILE_NAMES)),
    st.tuples(st.just("sparse"), st.sampled_from(SPARSE_TAILS)),
)

CASES = st.builds(Case, st.sampled_from(SOURCE_IDS), st.lists(EDITS, min_size=1, max_size=4).map(tuple))

# The line that once crashed `doctor memory --json` with a RecursionError (issue 10), in a real Qwen session.
DEEP_QWEN = Case("qwen/multi-turn/session.jsonl", (("line", 3, _deep(100_000, False)),))
DEEP_CLAUDE = Case(source_id(next(p for p in SOURCES if "claude/compact" in str(p))), (("line", 1, _deep(100_000, True)),))

# A crash's run of NUL bytes past the line cap after a Qwen session; markup and escapes in a file and tool name.
NUL_TAIL_QWEN = Case("qwen/multi-turn/session.jsonl", (("sparse", LINE_CAP + 1),))
HOSTILE_NAMES_CLAUDE = Case(source_id(next(p for p in SOURCES if "claude/compact" in str(p))),
                            (("filename", "[bold red]x"), ("filename", "\x1b[31mred"), ("markup", 2, b"[/nope]"),
                             ("markup", 3, b"\\u001b]52;c;aGk=\\u0007")))

__all__ = ["CASES", "Case", "DEEP_CLAUDE", "DEEP_QWEN", "HOSTILE_NAMES_CLAUDE", "NUL_TAIL_QWEN", "RECORDINGS", "SOURCES",
           "apply"]
