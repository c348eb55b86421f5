"""The Qwen reader against Qwen Code 0.24.4's own `/doctor memory --json` on real recordings.

Every folder under tests/recordings/qwen/ with a meta.json is a scenario; each
of its `doctorRuns` (expected*.json) is one comparison, so new recordings are
picked up without editing this file. Robustness inputs are mutated copies of
those real recordings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import uuid as uuidlib
from pathlib import Path

import pytest

from doctor.assemble import ReportOptions, report_for_session
from doctor.core.jsvalues import js_len
from doctor.sources import qwen
from doctor.sources.base import SourceError
from doctor.sources.qwen.history import ORPHAN_TOOL_USE_REPAIR_REASON
from doctor.sources.registry import open_session

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings" / "qwen"


def _scenarios() -> list[Path]:
    return sorted(p for p in RECORDINGS.iterdir() if (p / "meta.json").is_file() and (p / "session.jsonl").is_file())


def _runs() -> list:
    params = []
    for folder in _scenarios():
        meta = json.loads((folder / "meta.json").read_text())
        for name, run in sorted(meta.get("doctorRuns", {}).items()):
            if (folder / name).is_file():
                params.append(pytest.param(folder, name, run, id=f"{folder.name}/{name}"))
    return params


def _is_interactive(name: str, run: dict) -> bool:
    return str(run.get("mode", "")).startswith(("tui", "interactive")) or ".tui." in name


def _retention(session, run: dict, *, with_ui: bool) -> dict:
    options = ReportOptions(settings=run.get("settings") or {}, use_default_settings_files=False, env=run.get("env") or {})
    if not with_ui:
        # `-p` runs see an empty ui.history.
        session = dataclasses.replace(session, ui_history=None)
    report = report_for_session(session, options)
    assert report.retention is not None, report.retention_unavailable
    return report.retention.stats.to_qwen_json()


def _expected(path: Path) -> dict:
    return json.loads(path.read_text())["toolResultRetention"]


@pytest.mark.parametrize("folder, name, run", _runs())
def test_matches_qwen_doctor_memory(folder: Path, name: str, run: dict) -> None:
    session = open_session(folder / "session.jsonl")
    assert session.agent == "qwen"
    assert _retention(session, run, with_ui=_is_interactive(name, run)) == _expected(folder / name)


@pytest.mark.parametrize("folder", _scenarios(), ids=lambda p: p.name)
def test_session_fields(folder: Path) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    session = open_session(folder / "session.jsonl")
    assert session.session_id == meta["sessionId"]
    assert session.project_dir == Path(meta["cwd"])
    assert session.format == "qwen-jsonl"
    assert session.started
    assert session.spill_roots[0].name == meta["projectHash"]
    if (folder / "tmp").is_dir():
        assert folder / "tmp" in session.spill_roots
    assert not [i for i in session.issues if i.severity == "warning"]
    history = list(session.history())
    assert history[0]["role"] == "user"
    assert not any("functionResponse" in p for p in history[0]["parts"])  # the startup-context stand-in


# --- mutated copies of real recordings -------------------------------------------------------


def _copy(tmp_path: Path, scenario: str) -> tuple[Path, list[bytes]]:
    target = tmp_path / scenario / "session.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(RECORDINGS / scenario / "session.jsonl", target)
    return target, target.read_bytes().splitlines(keepends=True)


def _default_numbers(path: Path) -> dict:
    return _retention(open_session(path), {}, with_ui=False)


def _line_of(lines: list[bytes], predicate) -> int:
    return next(i for i, line in enumerate(lines) if predicate(json.loads(line)))


def test_torn_last_line_is_a_note_and_ignored(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "multi-turn")
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    session = open_session(path)
    notes = [i for i in session.issues if i.line == len(lines)]
    assert notes and notes[0].severity == "note" and "incomplete last record" in notes[0].message
    complete, _ = _copy(tmp_path / "without", "multi-turn")
    complete.write_bytes(b"".join(lines[:-1]))
    assert _default_numbers(path) == _default_numbers(complete)


def test_invalid_lines_in_the_middle_are_skipped_and_reported(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "multi-turn")
    lines[10:10] = [b"this is not json\n", b'{"uuid": "half a record\n']
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert [(i.line, i.severity) for i in session.issues] == [(11, "warning"), (12, "warning")]
    assert "invalid JSON" in session.issues[0].message
    assert _default_numbers(path) == _expected(RECORDINGS / "multi-turn" / "expected.json")


def test_two_records_glued_on_one_line_are_recovered(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "batch-budget")
    glued = _line_of(lines, lambda r: r["type"] == "tool_result")
    lines[glued] = lines[glued].rstrip(b"\n") + lines.pop(glued + 1)
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert [i.line for i in session.issues] == [glued + 1]
    assert "2 record(s) recovered" in session.issues[0].message
    assert _default_numbers(path) == _expected(RECORDINGS / "batch-budget" / "expected.json")


def test_non_utf8_bytes_read_as_replacement_characters(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "multi-turn")
    target = _line_of(lines, lambda r: r["type"] == "tool_result")
    marker = lines[target].index(b"Output: ") + len(b"Output: ")
    lines[target] = lines[target][:marker] + b"\xff" + lines[target][marker + 1 :]
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert [(i.line, i.severity) for i in session.issues] == [(target + 1, "note")]
    outputs = [
        p["functionResponse"]["response"].get("output", "")
        for c in session.history()
        for p in c["parts"]
        if "functionResponse" in p
    ]
    assert any("Output: \ufffd" in o for o in outputs)
    # One ASCII byte became one U+FFFD: lengths, hence the numbers, are unchanged.
    assert _default_numbers(path) == _expected(RECORDINGS / "multi-turn" / "expected.json")


def test_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    with pytest.raises(SourceError, match="empty"):
        open_session(path)
    with pytest.raises(SourceError, match="no Qwen records"):
        qwen.read(path)


def test_fragments_sharing_a_uuid_are_merged(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "batch-budget")
    at = _line_of(lines, lambda r: r["type"] == "assistant" and len(r["message"]["parts"]) > 1)
    record = json.loads(lines[at])
    parts = record["message"]["parts"]
    first, second = dict(record), dict(record)
    first["message"] = {"role": "model", "parts": parts[:3]}
    second["message"] = {"role": "model", "parts": parts[3:]}
    lines[at : at + 1] = [json.dumps(first).encode() + b"\n", json.dumps(second).encode() + b"\n"]
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert session.issues == []
    model_turn = next(c for c in session.history() if c["role"] == "model" and len(c["parts"]) > 1)
    assert model_turn["parts"] == parts
    assert _default_numbers(path) == _expected(RECORDINGS / "batch-budget" / "expected.json")


def test_parent_pointing_nowhere_is_a_gap(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "multi-turn")
    prompts = [i for i, line in enumerate(lines) if json.loads(line)["type"] == "user"]
    gap_line = prompts[1]
    record = json.loads(lines[gap_line])
    record["parentUuid"] = str(uuidlib.uuid4())
    lines[gap_line] = json.dumps(record).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert any("gap in the parent chain" in i.message and record["uuid"] in i.message for i in session.issues)
    results_after_gap = sum(json.loads(line)["type"] == "tool_result" for line in lines[gap_line:])
    assert _default_numbers(path)["toolResultCount"] == results_after_gap < 21


def test_parent_cycle_stops_the_walk(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "multi-turn")
    root = json.loads(lines[0])
    root["parentUuid"] = json.loads(lines[-1])["uuid"]
    lines[0] = json.dumps(root).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert any("loops back" in i.message for i in session.issues)
    assert _default_numbers(path) == _expected(RECORDINGS / "multi-turn" / "expected.json")


def test_second_session_id_is_reported(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "orphaned")
    at = _line_of(lines, lambda r: r.get("subtype") == "ui_telemetry")
    record = json.loads(lines[at])
    record["sessionId"] = str(uuidlib.uuid4())
    lines[at] = json.dumps(record).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert any("more than one sessionId" in i.message and record["sessionId"] in i.message for i in session.issues)


def test_records_with_bad_identity_are_dropped_with_their_line(tmp_path: Path) -> None:
    path, lines = _copy(tmp_path, "orphaned")
    at = _line_of(lines, lambda r: r.get("subtype") == "ui_telemetry")
    record = json.loads(lines[at])
    record["parentUuid"] = 7
    lines[at] = json.dumps(record).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    session = open_session(path)
    assert [(i.line, i.message) for i in session.issues if "skipped" in i.message] == [
        (at + 1, "record skipped as Qwen does: parentUuid is neither a string nor null")
    ]


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="directory"):
        open_session(tmp_path)
    with pytest.raises(SourceError, match="directory"):
        qwen.read(tmp_path)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_refused(tmp_path: Path) -> None:
    path, _ = _copy(tmp_path, "orphaned")
    path.chmod(0)
    try:
        with pytest.raises(SourceError, match="permission denied"):
            open_session(path)
    finally:
        path.chmod(0o600)


def test_reader_never_writes(tmp_path: Path) -> None:
    path, _ = _copy(tmp_path, "multi-turn")
    before = (path.stat().st_size, path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    session = open_session(path)
    list(session.history())
    list(session.ui_history)
    after = (path.stat().st_size, path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    assert after == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["session.jsonl"]


# --- what the rebuild must do, shown on the recordings that exercise it ------------------------


def test_orphaned_calls_get_qwens_synthesized_errors() -> None:
    session = open_session(RECORDINGS / "orphaned" / "session.jsonl")
    errors = [
        p["functionResponse"]
        for c in session.history()
        for p in c["parts"]
        if "functionResponse" in p and "error" in p["functionResponse"]["response"]
    ]
    assert [e["response"]["error"] for e in errors] == [ORPHAN_TOOL_USE_REPAIR_REASON] * 2
    assert [e["name"] for e in errors] == ["run_shell_command"] * 2
    assert js_len(ORPHAN_TOOL_USE_REPAIR_REASON) == 141


def test_compression_replaces_the_history_but_not_the_ui() -> None:
    folder = RECORDINGS / "compress-fast"
    if not folder.is_dir():
        pytest.skip("compress-fast not recorded")
    session = open_session(folder / "session.jsonl")
    tool_results = sum(json.loads(line)["type"] == "tool_result" for line in (folder / "session.jsonl").open("rb"))
    ui_tools = sum(len(item["tools"]) for item in session.ui_history if item["type"] == "tool_group")
    assert ui_tools == tool_results
    assert any(
        p["functionResponse"]["response"].get("output") == "[Old tool result content cleared]"
        for c in session.history()
        for p in c["parts"]
        if "functionResponse" in p
    )


def test_ui_history_names_tools_as_qwen_shows_them() -> None:
    session = open_session(RECORDINGS / "multi-turn" / "session.jsonl")
    names = {tool["name"] for item in session.ui_history if item["type"] == "tool_group" for tool in item["tools"]}
    assert {"Shell", "Glob", "Grep", "ReadFile"} <= names
    displays = [tool["resultDisplay"] for item in session.ui_history if item["type"] == "tool_group" for tool in item["tools"]]
    assert all(d is not None for d in displays)
    assert len(displays) == session.side_channel["ui-display"].count


def test_sniff_claims_qwen_recordings_only() -> None:
    from doctor.sources.sniffing import Head

    recordings = RECORDINGS.parent
    for path in sorted(recordings.glob("*/*/*.json*")):
        claimed = qwen.sniff(path, Head.read(path))
        assert claimed == (path.parent.parent.name == "qwen" and path.name == "session.jsonl"), path
