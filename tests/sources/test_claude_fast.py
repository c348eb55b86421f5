"""The fast read of a Claude Code file gives exactly what the exact read gives.

The exact read decodes every line fully (`jsonl.line_values`: orjson, the stdlib
for its refusals) as the reader always did; the fast read decodes each line with
a typed msgspec Struct, keeps the `toolUseResult`, `attachment` and `progress`
copies raw and counts their text from the bytes (`rawjson.text_units`, or the
pure-Python walk when the C counter gives up); without the C module every line takes the
exact path. Both run on every committed Claude recording and public
fixture, and on mutated copies (tests/sources/differential.py and the hardening
fuzzer's edits), with the C accelerator and without it, and must agree on the
whole session: history, meta, side channels, issues, identity, analysis rows.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.sources import claude
from doctor.sources.claude import lines
from tests.hardening.mutations import EDITS, apply
from tests.sources.differential import EXAMPLES, MODES, TRICKY_TEXT, agree, check_fast_path_use, mutated_lines

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "recordings" / "claude").glob("*/home/.claude/projects/**/*.jsonl")) + sorted(
    (ROOT / "fixtures" / "public" / "claude-code").glob("*.jsonl"))
KEYS = ["timestamp", "sessionId", "uuid", "isSidechain", "type", "subtype", "message", "toolUseResult", "attachment",
        "data", "microcompactMetadata", "cwd", "agentId", "content", "id", "tool_use_id", "compactedToolIds"]


def _agree(path: Path, monkeypatch, mode: str) -> int:
    return agree(claude, lines, "fast_record", path, monkeypatch, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_read_the_same_fast_and_exact(path: Path, mode: str, monkeypatch) -> None:
    check_fast_path_use(_agree(path, monkeypatch, mode), path, mode)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(FILES), seed=st.integers(0, 2**32), text=TRICKY_TEXT,
       edits=st.lists(EDITS, max_size=2))
def test_mutated_copies_read_the_same_fast_and_exact(source: Path, seed: int, text: str, edits, mode: str,
                                                      monkeypatch) -> None:
    data = mutated_lines(source.read_bytes(), random.Random(seed), text, KEYS)
    for edit in edits:
        data = apply(data, edit)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / source.name
        path.write_bytes(data)
        _agree(path, monkeypatch, mode)


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
], ids=lambda line: repr(line[:48]) + f"…{len(line)}")
def test_lines_the_decoders_disagree_on(line: bytes, mode: str, monkeypatch, tmp_path: Path) -> None:
    """Hand-made lines for the corners: a 320-digit number (msgspec accepts it, orjson refuses it) beside a
    raw copy and beside a tool input holding a >64-bit integer, such integers alone (orjson makes them floats,
    msgspec ints), key-like values, lone surrogates, escaped keys, nesting too deep for msgspec only or for all, block types that are not strings (once a crash)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"user","uuid":"0","sessionId":"s","message":{"role":"user","content":"go"}}\n' + line + b"\n")
    _agree(path, monkeypatch, mode)
