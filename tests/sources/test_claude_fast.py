"""The fast read of a Claude Code file gives exactly what the exact read gives.

The exact read decodes every line fully (`jsonl.line_values`: orjson, the stdlib
for its refusals) as the reader always did; the fast read scans a chunk of lines in
C (`rawjson.scan_records`), decodes the shortened copies with one typed msgspec call,
keeps the `toolUseResult`, `attachment` and `progress` copies raw and counts their
text from the bytes (`raw_text_chars`); a line either refuses goes the exact path,
a chunk msgspec refuses goes line by line; without the C module every line takes the
exact path. Both run on every committed Claude recording and public
fixture, and on mutated copies (tests/sources/differential.py and the hardening
fuzzer's edits), with the C accelerator and without it, and must agree on the
whole session: history, meta, side channels, issues, identity, analysis rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.sources import claude
from doctor.sources.claude import lines
from tests.hardening.mutations import EDITS
from tests.sources.differential import EXAMPLES, MODES, TRICKY_TEXT, agree, check_fast_path_use, mutated_copy

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "recordings" / "claude").glob("*/home/.claude/projects/**/*.jsonl")) + sorted(
    (ROOT / "fixtures" / "public" / "claude-code").glob("*.jsonl"))
KEYS = ["timestamp", "sessionId", "uuid", "isSidechain", "type", "subtype", "message", "toolUseResult", "attachment",
        "data", "microcompactMetadata", "cwd", "agentId", "content", "id", "tool_use_id", "compactedToolIds"]


# The chunk of lines scanned and decoded at once: the reader's own, and one that splits a recording
# into many (a line of another chunk, a chunk msgspec refuses as a whole because of one line).
CHUNKS = [lines.CHUNK_BYTES, 700]


def _agree(path: Path, monkeypatch, mode: str, chunk_bytes: int = lines.CHUNK_BYTES) -> int:
    monkeypatch.setattr(lines, "CHUNK_BYTES", chunk_bytes)
    return agree(claude, lines, "decoded_record", path, monkeypatch, mode)


@pytest.mark.parametrize("chunk_bytes", CHUNKS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_read_the_same_fast_and_exact(path: Path, mode: str, chunk_bytes: int, monkeypatch) -> None:
    used = sum(1 for line in path.read_bytes().splitlines()
               if line.strip() and orjson.loads(line).get("type") in lines.USED_TYPES)
    check_fast_path_use(_agree(path, monkeypatch, mode, chunk_bytes), used, mode)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(FILES), seed=st.integers(0, 2**32), text=TRICKY_TEXT,
       edits=st.lists(EDITS, max_size=2), chunk_bytes=st.sampled_from(CHUNKS))
def test_mutated_copies_read_the_same_fast_and_exact(source: Path, seed: int, text: str, edits, chunk_bytes: int,
                                                      mode: str, monkeypatch) -> None:
    with mutated_copy(source, seed, text, edits, KEYS) as path:
        _agree(path, monkeypatch, mode, chunk_bytes)


# A string value the scan blanks in the copy msgspec reads (escapes, accents and an astral character).
LONG = b"x\\n\\t\\\"\\\\\\u001b[0m \xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 " * 16
# An assistant line whose tool input holds an integer orjson makes a float and the stdlib an int, open at the end.
BIG_INPUT = (b'{"type":"assistant","uuid":"b","message":{"id":"m3","content":[{"type":"tool_use","id":"t",'
             b'"name":"n","input":{"n":123456789012345678901234567890}}]}')


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("line", [
    b'{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t",'
    b'"content":"x"}]},"toolUseResult":{"stdout":"\\u00e9\\ud83d\\ude00\\"\\\\ \\n","n":' + b"1" * 320 + b"}}",
    b'{"type":"attachment","attachment":{"k":"\\"key-like\\":", "a":["\\u0041",":"], "\\u0062":"c"}}',
    b'{"type":"user","message":{"role":"user","content":[{"type":"tool_use","id":"t","name":"n",'
    b'"input":{"n":123456789012345678901234567890}}]},"zz":' + b"9" * 400 + b"}",
    b'{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"n",'
    b'"input":{"n":123456789012345678901234567890,"m":-18446744073709551617}}]}}',
    b'{"type":"progress","data":{"output":"a\\ud800b"}}',
    b'{"type":"user","message":' + b"[" * 100_000 + b"]" * 100_000 + b"}",  # msgspec: RecursionError
    b'{"type":"user","uuid":"d","message":{"content":"x"},"toolUseResult":' + b"[" * 1000 + b"]" * 1000 + b"}",
    b'{"type":"assistant","uuid":"f","message":{"id":"m2","content":[{"type":1.5},{"type":["x"]},{"type":{}}]}}',
    b'{"typ\\u0065":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":"hi"}]}}',
    BIG_INPUT + b',"zz":1e400}',  # orjson refuses the whole line (infinite), msgspec does not: ints stay ints
    BIG_INPUT + b',"zz":[2.5E+3,-0.1e-2,true,false,null]}',
    BIG_INPUT + b',"toolUseResult":{"stdout":"' + LONG + b'\\ud800"}}',  # a lone surrogate msgspec never sees
    BIG_INPUT + b',"toolUseResult":{"stdout":"' + LONG + b'\\ud83d\\ude00"}}',
    b'{"type":"user","uuid":"n","message":{"role":"user","content":"x"},"toolUseResult":'
    + b"[" * 300 + b'"' + LONG + b'"' + b"]" * 300 + b"}",
    b'{"type":"attachment","attachment":{"' + LONG + b'":"' + LONG + b'","k" : "' + LONG + b'" ,"l":["' + LONG + b'"]}}',
    b'{"type":"user","uuid":"m","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t",'
    b'"content":"' + LONG + b'"}]},"message":{"role":"user","content":"' + LONG + b'x"}}',
    b'{"type":"system","subtype":"microcompact_boundary","note":"' + LONG + b'","microcompactMetadata":'
    b'{"trigger":"' + LONG + b'","compactedToolIds":["t"]}}',
    b'{"type":"user","uuid":"k","message":{"role":"user","content":"x"},"toolUseResult":{"file":{"content":"'
    + LONG + b'","content":"kept"},"stdout":"' + LONG + b'"}}',  # a key twice: JSON.parse keeps the last
    b'{"type":"progress","data":{"\\u006f":"' + LONG + b'","o":"x"}}',  # an escaped key repeating another
], ids=lambda line: repr(line[:48]) + f"…{len(line)}")
def test_lines_the_decoders_disagree_on(line: bytes, mode: str, monkeypatch, tmp_path: Path) -> None:
    """Hand-made lines for the corners: a 320-digit number (msgspec accepts it, orjson refuses it) beside a
    raw copy and beside a tool input holding a >64-bit integer, such integers alone (orjson makes them floats,
    msgspec ints), key-like values, lone surrogates, escaped keys, nesting too deep for msgspec only or for
    all, block types that are not strings (once a crash); numbers orjson refuses beside such an integer (the
    fast path once made it a float), surrogate escapes and deep nesting beside strings the scan blanks, long
    keys, a message given twice, long strings in the metadata read, a nested key given twice (the raw count
    once added both values), an escaped key."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"user","uuid":"0","sessionId":"s","message":{"role":"user","content":"go"}}\n' + line + b"\n")
    _agree(path, monkeypatch, mode)


_USER = b'{"type":"user","uuid":"%d","sessionId":"s","message":{"role":"user","content":"turn %d"}}'


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("odd", [
    b'{"type":"queue-operation"}{"type":"queue-operation"}',  # two records glued on one line
    b'{"type":"queue-operation"} {"type":"user","uuid":"g","message":{"role":"user","content":"glued"}}',
    b'null null',
    b'{"type":"user","uuid":"t","message":{"role":"user",\n"content":"torn across two lines"}}',
    b'{"type":"queue-operation"}}',  # a bracket too many
    b'{"type":"user","uuid":"o","message":{"role":"user","content":"open"}',  # one too few
    b'"a string" {"type":"queue-operation"}',
    b'7 {"type":"queue-operation"}',
], ids=["glued", "glued-used", "two-nulls", "torn", "extra-close", "unclosed", "string-first", "number-first"])
def test_a_line_of_more_or_less_than_one_value_keeps_every_other_line_in_place(odd: bytes, mode: str, monkeypatch,
                                                                               tmp_path: Path) -> None:
    """msgspec's `decode_lines` reads its input as a stream of values, not of lines: two values glued on
    one line, or one value torn across two, shift every later line of the chunk onto another line's record
    (the fuzzer found the user turn after a glued pair dropped and every line number off by one). Such a
    line must leave the chunk to the exact path and keep its neighbours in place."""
    records = [_USER % (n, n) for n in range(6)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(records[:3] + [odd] + records[3:]) + b"\n")
    _agree(path, monkeypatch, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("key", ["cwd", "sessionId", "uuid", "timestamp", "version", "agentId"])
def test_a_long_identifying_field_reads_the_same_fast_and_exact(key: str, mode: str, monkeypatch,
                                                               tmp_path: Path) -> None:
    """A project 300 characters deep (or any such field that long): the scan blanks every long string
    value in the copy msgspec decodes, so the fast path once read `cwd`, `sessionId`, `uuid`... as ""."""
    source = next(path for path in FILES if b'"agentId":"' in path.read_bytes())  # a subagent's file has them all
    data = re.sub(rb'"%s":"([^"\\]{1,120})"' % key.encode(),
                  lambda match: b'"%s":"%s/%s"' % (key.encode(), match.group(1), b"deep" * 80), source.read_bytes())
    assert data != source.read_bytes()
    path = tmp_path / source.name
    path.write_bytes(data)
    _agree(path, monkeypatch, mode)
