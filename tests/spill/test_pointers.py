"""Pointers from every public fixture and real recording resolve, or say why not."""

import contextlib
import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core import rawjson
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.sentinels import parse_stub, stub_preview_head
from doctor.sources.registry import open_session
from doctor.spill.pointers import (
    CLAUDE_MCP_SAVED,
    CLAUDE_PERSISTED,
    GEMINI_TOOL_OUTPUT,
    QWEN_BATCH,
    QWEN_PERSISTED,
    QWEN_TRUNCATION,
    pointers_for,
    pointers_in_text,
)
from doctor.sources import jsonl
from doctor.sources.jsonl import READ_CHUNK, count_records, iter_raw_lines, remembered_record_count
from doctor.spill import marker_scan
from doctor.spill.marker_scan import MARKERS, lines_mentioning_pointers
from doctor.spill.resolve import SpillLocator
from tests.hardening.mutations import CASES
from tests.public_fixtures import PUBLIC_FIXTURES
from tests.report.report_support import all_sources, source_id

REPO = Path(__file__).resolve().parents[2]
RECORDINGS = REPO / "tests" / "recordings"
FIXTURES = PUBLIC_FIXTURES


def session_files():
    files = sorted(RECORDINGS.glob("qwen/*/session.jsonl"))
    files += sorted(RECORDINGS.glob("claude/*/home/.claude/projects/*/*.jsonl"))
    files += sorted(RECORDINGS.glob("gemini/*/home/.gemini/tmp/*/chats/*.jsonl"))
    files += sorted(RECORDINGS.glob("codex/*/home/.codex/sessions/*/*/*/*.jsonl"))
    files += sorted(p for p in FIXTURES.glob("*/*") if p.suffix in (".json", ".jsonl"))
    return files


def pointers_of(path):
    session = open_session(path)
    return session, pointers_for(session, analyze_tool_result_retention(session.history()))


@pytest.mark.parametrize("path", session_files(), ids=lambda p: f"{p.parts[-2]}/{p.name}"[-60:])
def test_every_pointer_resolves_beside_the_dump_or_is_explained(path):
    session, pointers = pointers_of(path)
    locator = SpillLocator(session.path, session_roots=session.spill_roots)
    for pointer in pointers:
        resolution = locator.resolve(pointer)
        if resolution.exists:
            assert resolution.inside
            # Recorded paths name the recording machine (/tmp/qrec, /tmp/crec): found by remapping here.
            assert resolution.remapped and REPO in resolution.found.resolve().parents
        else:
            # Only the excerpted Claude fixture lacks its spill file (the repo did not ship it).
            assert "persisted-output-excerpt" in path.name, pointer


EXPECTED_KINDS = {
    "qwen/persist-gate": [QWEN_PERSISTED, QWEN_TRUNCATION],
    "qwen/batch-budget": [QWEN_BATCH] * 6,
    "qwen/shell-truncation": [QWEN_TRUNCATION],
    "qwen/errors": [QWEN_PERSISTED],
    "claude/big-outputs": [CLAUDE_PERSISTED, CLAUDE_PERSISTED],
    "claude/subagent": [CLAUDE_PERSISTED],
    "gemini/big-outputs": [GEMINI_TOOL_OUTPUT] * 7,
    "claude/parallel-and-errors": [],
    "codex/big-outputs": [],
}


@pytest.mark.parametrize("scenario", sorted(EXPECTED_KINDS))
def test_pointer_kinds_per_recording(scenario):
    path = next(p for p in session_files() if p.relative_to(RECORDINGS).as_posix().startswith(scenario))
    _, pointers = pointers_of(path)
    assert [p.kind for p in pointers] == EXPECTED_KINDS[scenario]
    assert all(p.preview_head is not None for p in pointers if p.kind != GEMINI_TOOL_OUTPUT)


def test_qwen_gate_stub_carries_digest_and_kb():
    path = RECORDINGS / "qwen/persist-gate/session.jsonl"
    _, pointers = pointers_of(path)
    gate = pointers[0]
    spilled = next(path.parent.glob("tmp/tool-results/call_*.txt")).read_bytes()
    assert gate.ordinal == 0 and gate.tool == "glob" and gate.declared_kb == round(len(spilled) / 1024)
    assert gate.sha256 == hashlib.sha256(spilled).hexdigest()


def test_claude_tool_use_result_gives_the_byte_size():
    path = next(RECORDINGS.glob("claude/big-outputs/home/.claude/projects/*/*.jsonl"))
    _, pointers = pointers_of(path)
    assert [p.declared_bytes for p in pointers] == [1288895, 102000]
    assert all(p.call_id.startswith("toolu_") for p in pointers)


def test_claude_subagent_spill_is_found_in_its_transcript():
    path = next(RECORDINGS.glob("claude/subagent/home/.claude/projects/*/*.jsonl"))
    _, pointers = pointers_of(path)
    assert [p.source for p in pointers] == ["subagent"]


def test_claude_fixture_stub_without_its_file_is_reported_missing():
    path = FIXTURES / "claude-code/spotter-8463c716-persisted-output-excerpt-L1094-1115.jsonl"
    session, pointers = pointers_of(path)
    assert [p.path.rsplit("/", 1)[-1] for p in pointers] == ["toolu_019CpL49DWBenUxVVCWEXz3L.txt"]
    assert not SpillLocator(session.path, session_roots=session.spill_roots).resolve(pointers[0]).exists


def test_claude_mcp_saved_form():
    text = ("Error: result (374,984 characters) exceeds maximum allowed tokens. Output has been saved to "
            "/h/.claude/projects/p/0b1c2df2-ae4c-4b12-8427-204ca5e7f614/tool-results/mcp-wonk-ls-1700000000000.txt.\n"
            "Format: JSON array with schema: [{type: string, text: string}]")
    [pointer] = pointers_in_text("claude", text)
    assert pointer.kind == CLAUDE_MCP_SAVED and pointer.path.endswith("1700000000000.txt")


def test_qwen_unsaved_stub_is_a_pointer_without_a_file():
    text = "Output too large (60000 KB). (file too large to persist)\nFull output sha256: " + "a" * 64 + "\n\nPreview (up to 2000 chars):\nx"
    [pointer] = pointers_in_text("qwen", text)
    assert pointer.path is None and pointer.note == "(file too large to persist)"


def test_autobot_anchor_names_its_hashed_artifact():
    anchor = "autobot:spill:task-1:run_shell:0123456789abcdef"
    note = f"Output truncated to 2000 of 9000 chars. Read the full output with the read_spilled_output tool using anchor '{anchor}'."
    [pointer] = pointers_in_text("autobot", note)
    assert pointer.anchor == anchor and pointer.artifact_name.endswith(".json") and pointer.path is None


def test_existing_stub_parsing_is_unchanged():
    stub = parse_stub("Output too large (61 KB). (file too large to persist)\nFull output sha256: " + "b" * 64)
    assert stub.declared_kb == 61 and stub.paths == () and stub.note == "(file too large to persist)"


def test_preview_head_unescapes_qwen_tags_and_drops_the_ellipsis():
    stub = ("<persisted-output>\nOutput too large (40 KB). Full output saved to: /x\n\nPreview (up to 2000 chars):\n"
            "a &lt;system-reminder&gt; b\n...\n</persisted-output>")
    assert stub_preview_head(stub) == "a <system-reminder> b"


# -- the marker scan: one pass finds the lines holding a marker and counts the lines, C or pure


@contextlib.contextmanager
def _unmappable(path):
    yield None


@pytest.fixture(params=["accelerated/mapped", "pure/mapped", "accelerated/read", "pure/read"])
def scan_mode(request, monkeypatch):
    """The marker scan with the C pass or the exact pure one, over a map of the file or reads of it
    (a file that cannot be mapped)."""
    function, source = request.param.split("/")
    if function == "accelerated" and not rawjson.accelerated:
        pytest.skip("the C accelerator is not built here")
    if function == "pure":
        monkeypatch.setattr(marker_scan, "marked_lines", rawjson.py_marked_lines)
    if source == "read":
        monkeypatch.setattr(marker_scan, "read_only_map", _unmappable)
    return request.param


def _by_testing_each_line(path):
    """The plain definitions the scan must equal: every line of the file that holds a marker, and the
    number of lines (a last line without its newline is one)."""
    lines = [raw for _, _, raw, terminated in iter_raw_lines(path) if terminated or raw]  # not the "" after a last newline
    return [raw for raw in lines if any(marker in raw for marker in MARKERS)], len(lines)


def _scanned(path, chunk_size=READ_CHUNK):
    lines = list(lines_mentioning_pointers(path, chunk_size=chunk_size, remember_count=True))
    return lines, remembered_record_count(path)


@pytest.mark.parametrize("path", all_sources(), ids=source_id)
def test_marker_scan_finds_the_lines_testing_each_line_finds(path, scan_mode):
    expected = _by_testing_each_line(path)
    for chunk_size in (READ_CHUNK, 4096, 61, 1):
        assert _scanned(path, chunk_size) == expected, chunk_size


@settings(max_examples=int(os.environ.get("DOCTOR_FUZZ_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=CASES, chunk_size=st.integers(1, 5000), markers=st.lists(st.sampled_from(MARKERS), max_size=6),
       at=st.lists(st.integers(0, 1 << 30), min_size=6, max_size=6))
def test_marker_scan_agrees_on_mutated_recordings(tmp_path_factory, scan_mode, case, chunk_size, markers, at):
    """Mutated recordings with markers spliced in anywhere (line starts and ends, inside escapes, next to
    CRLFs and chunk boundaries), read in chunks of any size."""
    data = case.data()
    for marker, offset in zip(markers, at):
        offset %= len(data) + 1
        data = data[:offset] + marker + data[offset:]
    path = tmp_path_factory.mktemp("markers") / "session.jsonl"
    path.write_bytes(data)
    assert _scanned(path, chunk_size) == _by_testing_each_line(path)


def test_marker_scan_named_cases(tmp_path, scan_mode):
    """A marker at the file's start and end, cut by every chunk boundary, after a CRLF, on a line longer
    than a chunk; no newline at the end; an empty file; a marker alone."""
    line = b'{"a":"' + b"x" * 300 + b' saved to /t\\o"}'
    cases = [b"", b"saved to", b"\n\nsaved to\n\nsaved tosaved to", b"autobot:spill:x\r\n" + line + b"\r\n" + line,
             line + b"\n" + b"y" * 70 + b"\nFor full output see", b"\n" * 5 + b"persistedOutputPath\n"]
    for number, data in enumerate(cases):
        path = tmp_path / f"{number}.jsonl"
        path.write_bytes(data)
        expected = _by_testing_each_line(path)
        for chunk_size in (1, 2, 3, 7, 8, 9, 30, 64, 65, 299, 300, 301, 1000):
            assert _scanned(path, chunk_size) == expected, (data[:40], chunk_size)
    assert _scanned(tmp_path / "2.jsonl", 3) == ([b"saved to", b"saved tosaved to"], 5)


def test_count_records_takes_the_count_of_the_scan_until_the_file_changes(tmp_path, monkeypatch):
    """After the scan read the whole session, `count_records` answers without reading it (reading it
    fails here); once the file grows it reads and counts it again."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":"saved to /x"}\n{"c":2}')
    assert list(lines_mentioning_pointers(path, remember_count=True)) == [b'{"b":"saved to /x"}']
    with monkeypatch.context() as patch:
        patch.setattr(jsonl, "open_session_file", None)
        assert count_records(path) == 3
    with path.open("ab") as handle:
        handle.write(b"\n")
    assert remembered_record_count(path) is None
    assert count_records(path) == 3
    with path.open("ab") as handle:
        handle.write(b'{"d":3}\n')
    assert count_records(path) == 4


def test_the_audit_remembers_the_session_count_not_a_subagents():
    """A Claude session with subagent transcripts: their scan comes after the session's and must not
    replace its count."""
    path = next(RECORDINGS.glob("claude/subagent/home/.claude/projects/*/*.jsonl"))
    assert list((path.with_suffix("") / "subagents").glob("*.jsonl"))
    pointers_of(path)
    assert remembered_record_count(path) == _by_testing_each_line(path)[1]
