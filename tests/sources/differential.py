"""What the fast-vs-exact reader tests of Claude Code and Codex share: hostile text and line edits.

A reader's fast path decodes lines field by field with msgspec and counts lengths
from raw bytes; its exact path decodes every line fully (orjson, then the
stdlib). The tests read the same file both ways and compare everything the
session holds. These are the inputs where the two could part: text full of
escapes, controls, accents, CJK, astral characters and lone surrogates (escaped,
and raw: invalid UTF-8), same-named keys, escaped key names, values of unusual
types, integers of every size, torn and glued lines, and the hardening fuzzer's
byte-level edits.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st

from doctor.core import rawjson
from doctor.core.analysis import analyze_tool_result_retention
from tests.hardening.mutations import apply

MODES = ["accelerated", "pure"]
EXAMPLES = max(30, int(os.environ.get("DOCTOR_DIFFERENTIAL_EXAMPLES", "400")) // 6)

TRICKY_TEXT = st.text(
    alphabet=st.sampled_from(list('ab "\\/\n\t\r\b\f\x00\x1b\x7fuéß中文😀𝔘\ud800\udbff\udc00\udfff') + ["\u2028", "}", "{", ":"]),
    min_size=0,
    max_size=2500,
)

# Values a field could hold in a hostile or future file, beside its usual one.
ODD_VALUES = [None, 7, -0.0, 1e300, 12345678901234567890123, True, [], {}, [1, "x"], {"k": "v"}, "",
              "<persisted-output>\nOutput too large (2MB). Full output saved to: /x/tool-results/a.txt\n"]
# Raw JSON numbers the decoders disagree on (orjson: float or refusal; msgspec: int; stdlib: int).
RAW_NUMBERS = [b"1" * 310, b"-" + b"9" * 400, b"18446744073709551616", b"123456789012345678901234567890",
               b"1e400", b"1" * 300, b"NaN", b"-Infinity", b"1E2", b"-0"]


def dump(value, rng: random.Random) -> bytes:
    """`value` as one JSON line, compact or spaced, ASCII-escaped or not; lone surrogates written
    raw (invalid UTF-8) when not escaped."""
    text = json.dumps(value, ensure_ascii=rng.random() < 0.3,
                      separators=(",", ":") if rng.random() < 0.8 else (", ", ": "))
    return text.encode("utf-8", "surrogatepass")


def retext(value, rng: random.Random, text: str):
    """`value` with some of its strings (not keys) replaced by `text` or a piece of it."""
    if isinstance(value, str):
        return text[: rng.randrange(len(text) + 1)] if rng.random() < 0.5 else value
    if isinstance(value, list):
        return [retext(item, rng, text) for item in value]
    if isinstance(value, dict):
        return {key: retext(item, rng, text) for key, item in value.items()}
    return value


def raw_edit(line: bytes, rng: random.Random) -> bytes:
    """A byte-level edit of one JSON line that json.dumps cannot write."""
    choice = rng.randrange(7)
    body = line.rstrip(b"\r\n")
    if choice == 0 and body.endswith(b"}"):  # a number the decoders disagree on, as a new last field
        return body[:-1] + b',"zz":' + rng.choice(RAW_NUMBERS) + b"}\n"
    if choice == 1 and body.startswith(b'{"'):  # an escaped key name
        return b'{"\\u0074' + body[3:] + b"\n" if body.startswith(b'{"t') else line
    if choice == 2:  # a torn line glued to the next one
        return body[: rng.randrange(len(body) + 1)]
    if choice == 3 and body.endswith(b"}"):  # the same key again, last one wins
        key = rng.choice([b"type", b"message", b"uuid", b"toolUseResult", b"payload", b"timestamp", b"isSidechain"])
        return body[:-1] + b',"' + key + b'":' + rng.choice([b"null", b'"user"', b'"assistant"', b"{}", b"1"]) + b"}\n"
    if choice == 4:  # invalid UTF-8 somewhere
        at = rng.randrange(len(body) + 1)
        return body[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f\x98"]) + body[at:] + b"\n"
    if choice == 5:  # CRLF, or spaces around
        return b"  " + body + b" \r\n"
    return line


def use(monkeypatch, mode: str) -> None:
    """The C accelerator, or none (as on a machine without a compiler: every line by the exact path)."""
    if mode == "accelerated":
        if not rawjson.accelerated:
            if os.environ.get("CI"):
                pytest.fail("the C accelerator was not built (setup.py's optional extension)")
            pytest.skip("the C accelerator is not built here")
        return
    for name in ("scan_record", "scan_records", "copy_text_units", "copy_span"):  # C only
        monkeypatch.setattr(rawjson, name, None)


def summary(reader, path: Path) -> str:
    """Everything the session holds, as text (a NaN the stdlib decoded is equal to itself only as text)."""
    session = reader.read(path)
    analysis = analyze_tool_result_retention(session.history_to_measure(), ui_history=session.ui_history)
    return repr({
        "history": list(session.history()), "rows": list(analysis.results), "stats": analysis.stats,
        "issues": session.issues, "side": dict(session.side_channel), "meta": session.meta,
        "id": session.session_id, "started": session.started, "format": session.format,
        "project": session.project_dir,
    })


def agree(reader, lines_module, fast_name: str, path: Path, monkeypatch, mode: str) -> int:
    """`reader` reads `path` in `mode` as it does with every line by the exact path (no C module);
    returns how many lines `lines_module.<fast_name>` (what makes a line's record from its fast
    decode, None to leave the line to the exact path) read itself."""
    with monkeypatch.context() as patch:
        use(patch, "pure")
        expected = summary(reader, path)
    taken = 0
    original = getattr(lines_module, fast_name)

    def counted(*args):
        nonlocal taken
        read = original(*args)
        taken += read is not None
        return read

    with monkeypatch.context() as patch:
        use(patch, mode)
        patch.setattr(lines_module, fast_name, counted)
        assert summary(reader, path) == expected
    return taken


def check_fast_path_use(taken: int, lines: int, mode: str) -> None:
    """The fast decode reads most of the `lines` it is for in a real recording with the C module, and
    none without it."""
    if mode == "accelerated":
        assert lines and taken >= 0.9 * lines
    else:
        assert taken == 0


def mutated_lines(data: bytes, rng: random.Random, text: str, keys: list[str]) -> bytes:
    """Some lines re-written with tricky text, some fields (`keys`, at any depth) given odd values,
    some edited byte-wise."""
    out = []
    for line in data.splitlines(keepends=True):
        if rng.random() < 0.35:
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if isinstance(record, dict):
                record = retext(record, rng, text)
                if rng.random() < 0.25:
                    _set_somewhere(record, rng.choice(keys), rng.choice(ODD_VALUES), rng)
                line = dump(record, rng) + b"\n"
        if rng.random() < 0.08:
            line = raw_edit(line, rng)
        out.append(line)
    return b"".join(out)


@contextlib.contextmanager
def mutated_copy(source: Path, seed: int, text: str, edits: list, keys: list[str]):
    """A scratch copy of `source` (same name) with `mutated_lines` and the fuzzer's `edits` applied."""
    data = mutated_lines(source.read_bytes(), random.Random(seed), text, keys)
    for edit in edits:
        data = apply(data, edit)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / source.name
        path.write_bytes(data)
        yield path


def _set_somewhere(record: dict, key: str, value, rng: random.Random) -> None:
    """`record[key] = value`, or the same in a nested object that has `key` (chosen at random)."""
    holders, pending = [record], [record]
    while pending:
        item = pending.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                pending.append(child)
                if isinstance(child, dict) and key in child:
                    holders.append(child)
    rng.choice(holders)[key] = value
