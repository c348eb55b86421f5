"""The Codex reader reads hostile rollouts without crashing: tricky text, fields of any type.

Mutated copies of every committed Codex recording and public fixture
(tests/sources/differential.py and the hardening fuzzer's edits) and hand-made
corner lines must read into a session (with issues for what was skipped), never
raise: an item type or call id that is an object, array or number once crashed
the reader (exit 4).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.sources import codex
from tests.hardening.mutations import EDITS
from tests.sources.differential import EXAMPLES, TRICKY_TEXT, mutated_copy, summary

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "recordings" / "codex").glob("*/home/.codex/sessions/*/*/*/rollout-*.jsonl")) + sorted(
    (ROOT / "fixtures" / "public" / "codex").glob("*.jsonl"))
KEYS = ["type", "payload", "item", "aggregated_output", "stdout", "stderr", "formatted_output", "result", "output",
        "call_id", "model", "replacement_history", "message", "encrypted_content", "record_type", "id", "timestamp"]
EVENT = b'{"timestamp":"t","type":"event_msg","payload":'


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_read(path: Path) -> None:
    assert "'tool_results'" in summary(codex, path)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(FILES), seed=st.integers(0, 2**32), text=TRICKY_TEXT,
       edits=st.lists(EDITS, max_size=2))
def test_mutated_copies_read(source: Path, seed: int, text: str, edits) -> None:
    with mutated_copy(source, seed, text, edits, KEYS) as path:
        summary(codex, path)


@pytest.mark.parametrize("line", [
    EVENT + b'{"type":"exec_command_end","stdout":"\\u00e9\\ud83d\\ude00\\"\\\\ \\n","stderr":7,"aggregated_output":null}}',
    EVENT + b'{"type":"item_completed","item":{"type":"CommandExecution","aggregated_output":"a\\tb","stdout":["x"]}}}',
    EVENT + b'{"type":"item_completed","item":["CommandExecution"]}}',
    EVENT + b'{"type":"item_completed","item":{"type":7}}}',
    EVENT + b'{"type":"patch_apply_end","stdout":"ok","stderr":"","aggregated_output":"not counted"}}',
    EVENT + b'{"type":"mcp_tool_call_end","result":{"Ok":{"content":[{"type":"text","text":"\\"k\\":"}]}}}}',
    EVENT + b'null}',
    EVENT + b'[1]}',
    b'{"type":"event_msg","payload":{"type":"exec_command_end","stdout":"x"},"type":"response_item"}',
    b'{"type":"response_item","payload":{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},"type":"event_msg"}',
    b'{"type":"legacy_meta","payload":{"id":"x","cwd":"/w"}}',
    b'{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"o","n":'
    b'123456789012345678901234567890}}',
    EVENT + b'{"type":"exec_command_end","stdout":"x","n":' + b"1" * 320 + b"}}",
    EVENT + b'{"type":"exec_command_end","stdout":"a\\ud800b"}}',
    EVENT + b'{"type":"exec_command_end","stdout":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
    b'{"timestamp":"t","type":"response_item","payload":{"type":{"a":1},"call_id":"c"}}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":2.5,"call_id":"c"}}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":{"a":1},"output":"o"}}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"function_call","call_id":["c"],"name":"n"}}',
    b'{"type":{"k":1},"id":"x"}',
    b'{"record_type":"state"}',
    b'{"id":"legacy","timestamp":"t","instructions":"i"}',
    b'{"type":"function_call","call_id":"c","name":"bare"}',
], ids=lambda line: repr(line[:60]) + f"…{len(line)}")
def test_corner_lines_read(line: bytes, tmp_path: Path) -> None:
    """Output fields of other types, items that are not objects, payloads that are null or lists, a
    type given twice, big and huge numbers, lone surrogates, nesting too deep, legacy bare lines; item
    types and call ids that are objects, arrays or numbers (the reader once crashed on them)."""
    path = tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl"
    path.write_bytes(b'{"timestamp":"t","type":"session_meta","payload":{"id":"s","cwd":"/w"}}\n' + line + b"\n"
                     + b'{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output",'
                       b'"call_id":"c","output":"done"}}\n')
    assert codex.read(path).session_id == "s"
    summary(codex, path)
