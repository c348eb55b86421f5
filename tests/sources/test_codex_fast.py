"""The fast read of a Codex rollout gives exactly what the exact read gives.

The exact read decodes every line whole (`jsonl.line_values`: orjson, the stdlib
for its refusals); the fast read takes each `event_msg` line through the C scan
(`rawjson.scan_record`) and a typed msgspec decode of the shortened copy, and
measures the command output the event copies from the bytes (`raw_text_chars`)
without building it; without the C module every line takes the exact path. Both
run on every committed Codex recording and public fixture, on mutated copies
(tests/sources/differential.py and the hardening fuzzer's edits) and on hand-made
corner lines, with the C accelerator and without it, and must agree on the whole
session: history, meta, side channels, issues, identity, analysis rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.sources import codex
from doctor.sources.codex import lines
from tests.hardening.mutations import EDITS
from tests.sources.differential import EXAMPLES, MODES, TRICKY_TEXT, agree, check_fast_path_use, mutated_copy
from tests.sources.test_codex_hostile import EVENT, FILES, KEYS


def _agree(path: Path, monkeypatch, mode: str) -> int:
    return agree(codex, lines, "fast_event", path, monkeypatch, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_read_the_same_fast_and_exact(path: Path, mode: str, monkeypatch) -> None:
    events = sum(1 for line in path.read_bytes().splitlines() if lines.EVENT_MARK in line[: lines.MARK_WITHIN])
    check_fast_path_use(_agree(path, monkeypatch, mode), events, mode)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(FILES), seed=st.integers(0, 2**32), text=TRICKY_TEXT,
       edits=st.lists(EDITS, max_size=2))
def test_mutated_copies_read_the_same_fast_and_exact(source: Path, seed: int, text: str, edits, mode: str,
                                                      monkeypatch) -> None:
    with mutated_copy(source, seed, text, edits, KEYS) as path:
        _agree(path, monkeypatch, mode)


# A string value the scan blanks in the copy msgspec reads (escapes, accents and an astral character).
LONG = b"x\\n\\t\\\"\\\\\\u001b[0m \xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 " * 16


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("line", [
    EVENT + b'{"type":"item_completed","item":{"type":"CommandExecution","aggregated_output":"' + LONG
    + b'","stdout":"' + LONG + b'","stderr":7,"formatted_output":null}}}',
    EVENT + b'{"type":"exec_command_end","stdout" : "' + LONG + b'" , "stderr":"e","aggregated_output":"'
    + LONG + b'","formatted_output":["' + LONG + b'"]}}',
    EVENT + b'{"type":"item_completed","item":{"type":"CommandExecution","aggregated_output":"' + LONG
    + b'","aggregated_output":"short"}}}',  # the last one counts
    EVENT + b'{"type":"item_completed","item":{"type":"AgentMessage","text":"' + LONG + b'"}}}',
    EVENT + b'{"type":"item_completed","item":["' + LONG + b'"]}}',
    EVENT + b'{"type":"patch_apply_end","stdout":"' + LONG + b'","stderr":"","aggregated_output":"' + LONG + b'"}}',
    EVENT + b'{"type":"mcp_tool_call_end","result":{"Ok":{"content":[{"type":"text","text":"' + LONG + b'"}]}}}}',
    EVENT + b'{"type":"mcp_tool_call_end","result":{"Ok":{"k":"' + LONG + b'","k":"x"}}}}',  # a key twice
    EVENT + b'{"type":"mcp_tool_call_end","result":{"\\u004f":"' + LONG + b'","O":1}}}',  # an escaped key
    EVENT + b'{"type":"mcp_tool_call_end","result":"' + LONG + b'"}}',
    EVENT + b'{"type":"exec_command_end","stdout":"' + LONG + b'\\ud800"}}',  # a lone surrogate msgspec never sees
    EVENT + b'{"type":"exec_command_end","stdout":"' + LONG + b'","n":1e400}}',
    EVENT + b'{"type":"exec_command_end","stdout":"' + LONG + b'"},"payload":null}',
    EVENT + b'{"type":"exec_command_end","stdout":"' + LONG + b'"},"type":"response_item"}',
    b'{"timestamp":"t","type":"event_msg"}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":'
    b'[{"type":"input_text","text":"event_msg ' + LONG + b'"}]}}',
], ids=lambda line: repr(line[:60]) + f"…{len(line)}")
def test_event_lines_the_decoders_could_read_differently(line: bytes, mode: str, monkeypatch, tmp_path: Path) -> None:
    """Event lines with long outputs next to fields of other types, a field or a key given twice (the last
    one counts), escaped keys, items that are not objects, lone surrogates and numbers orjson refuses
    beside strings the scan blanks, a payload or type given twice, a line that only mentions event_msg."""
    path = tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl"
    path.write_bytes(b'{"timestamp":"t","type":"session_meta","payload":{"id":"s","cwd":"/w"}}\n' + line + b"\n")
    _agree(path, monkeypatch, mode)
