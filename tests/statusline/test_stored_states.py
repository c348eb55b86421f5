"""The status line's stored states: what is made again from the index is the state that was stored.

Each reader state is fed a real recording, stored as the index stores it (MessagePack, typed) and
restored; the restored state must equal the original attribute by attribute (a MeasuredText with
its JS length, arrays, Contents), keep the functionResponses the Claude reader shares between its
Contents, `results_by_id`, the late name join and the stubs as one object each, and, fed the rest
of the recording, give the figures the original gives. A new attribute a reader grows and the
stored form forgets fails here.
"""

from __future__ import annotations

from array import array
from collections import Counter, deque
from pathlib import Path

import pytest

from doctor.assemble import ReportOptions
from doctor.core.jsvalues import MeasuredText
from doctor.statusline import cache
from doctor.statusline.line import figures_of
from doctor.statusline.resume import STATES

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = sorted(p for p in (ROOT / "tests/recordings/claude").glob("*/home/.claude/projects/*/*.jsonl"))
QWEN = sorted((ROOT / "tests/recordings/qwen").glob("*/session.jsonl"))
# Attributes that are this call's, not the state's: rebuilt or handed in again after a restore.
NOT_STORED = {"_settings", "_budget_for", "_contents", "report", "outputs", "_text_in_line"}


def _roundtrip(state, path: Path):
    stored = state.stored()
    try:
        data = cache._encode(stored)
    except UnicodeEncodeError:
        data = cache._encode(cache._encodable(stored))
    return type(state).restored(path, cache._decoder(type(state).stored_type()).decode(data))


def _same(left, right, where: str = "state") -> None:
    assert type(left) is type(right), f"{where}: {type(left).__name__} != {type(right).__name__}"
    if isinstance(left, MeasuredText):
        assert _lengths(left) == _lengths(right), where
    elif isinstance(left, dict):
        assert list(left) == list(right), f"{where}: keys differ"
        for key in left:
            _same(left[key], right[key], f"{where}[{key!r}]")
    elif isinstance(left, (list, tuple, deque)):
        assert len(left) == len(right), f"{where}: {len(left)} != {len(right)} items"
        for number, (a, b) in enumerate(zip(left, right)):
            _same(a, b, f"{where}[{number}]")
    elif isinstance(left, (array, Counter, set, str, bytes, int, float, type(None), Path)):
        assert left == right, where
    elif hasattr(left, "__dict__") or hasattr(left, "__slots__"):
        names = set(getattr(left, "__dict__", {})) | set(getattr(type(left), "__slots__", ()))
        other = set(getattr(right, "__dict__", {})) | set(getattr(type(right), "__slots__", ()))
        assert names - NOT_STORED == other - NOT_STORED, f"{where}: attributes {sorted(names ^ other)}"
        for name in sorted(names - NOT_STORED):
            _same(getattr(left, name, None), getattr(right, name, None), f"{where}.{name}")
    else:
        assert left == right, where


def _half(path: Path, tmp_path: Path) -> tuple[Path, bytes]:
    """A copy of the recording's first half of lines, and the rest."""
    lines = path.read_bytes().splitlines(keepends=True)
    copy = tmp_path / path.name
    copy.write_bytes(b"".join(lines[: len(lines) // 2]))
    return copy, b"".join(lines[len(lines) // 2:])


@pytest.mark.parametrize("agent, recording", [*(("claude", p) for p in CLAUDE), *(("qwen", p) for p in QWEN)],
                         ids=lambda value: value if isinstance(value, str) else value.parent.name
                         if value.name == "session.jsonl" else value.parents[4].name)
def test_a_restored_state_is_the_stored_one_and_reads_on_alike(tmp_path, monkeypatch, agent, recording):
    monkeypatch.setenv("HOME", str(tmp_path))
    options = ReportOptions()
    copy, rest = _half(recording, tmp_path)
    state = STATES[agent](copy)
    state.feed(whole_lines_only=True)
    state.settle(options)
    restored = _roundtrip(state, copy)
    _same(state, restored)
    with open(copy, "ab") as handle:
        handle.write(rest)
    for each in (state, restored):
        each.feed(whole_lines_only=True)
        each.settle(options)
    _same(state, restored)
    assert figures_of(restored.analysis(options)) == figures_of(state.analysis(options))


def test_claude_shares_each_function_response_after_a_restore(tmp_path):
    """Microcompaction and the late name join change a result in place: in the Contents, through
    `results_by_id` and the pending join, so those must stay one object."""
    recording = next(p for p in CLAUDE if p.parents[4].name == "compact")
    state = STATES["claude"](recording)
    state.feed(whole_lines_only=True)
    restored = _roundtrip(state, recording)
    file = restored.reader.file
    held = {id(part["functionResponse"]) for thread in (file.thread, file.sidechain) for content in thread.contents
            for part in content["parts"] if "functionResponse" in part}
    shared = [fr for thread in (file.thread, file.sidechain) for fr in thread.results_by_id.values()]
    assert shared and all(id(fr) in held for fr in shared)
    assert all(id(fr) in held or fr in [f for f, *_ in file.stubs] for fr, _ in file.names._pending)


def test_a_text_with_a_lone_surrogate_is_stored_and_restored(tmp_path):
    """Qwen's truncation cuts surrogate pairs and JSON.stringify writes the half as `\\ud83d`: UTF-8 cannot
    carry it, so the index stores such a string as an extension, and gives it back as it was."""
    recording = next(p for p in CLAUDE if p.parents[4].name == "compact")
    lines = recording.read_bytes().splitlines(keepends=True)
    at = max(i for i, line in enumerate(lines) if b'"type":"user"' in line and b'"content":"' in line)  # after the compaction
    lines[at] = lines[at].replace(b'"content":"', b'"content":"\\ud83d cut pair ', 1)
    copy = tmp_path / recording.name
    copy.write_bytes(b"".join(lines))
    state = STATES["claude"](copy)
    state.feed(whole_lines_only=True)
    with pytest.raises(UnicodeEncodeError):
        cache._encode(state.stored())
    restored = _roundtrip(state, copy)
    _same(state, restored)
    assert any(text.startswith("\ud83d cut pair") for text in _strings(restored.reader.file.thread.contents))


def _lengths(text: MeasuredText) -> tuple:
    return str(text), text.js_length, text.utf8_length, text.json_length, text.json_token


@pytest.mark.parametrize("text", [
    MeasuredText("head \ud83d", 9_000),
    MeasuredText("bytes", 9_000, utf8_length=12_345),  # Codex measures bytes
    MeasuredText("json", 9_000, json_length=9_100, json_token=("/tmp/s\udcff.json", 10, 9_110)),  # Gemini, JSON
])
def test_a_measured_text_comes_back_with_every_length_it_carries(text):
    """An agent's own measure adds lengths to a MeasuredText (UTF-8 bytes, JSON length or the JSON token's
    place in the file); a state stored with one gives all of them back, a file name in any bytes included."""
    assert _lengths(cache._value(cache.MEASURED, memoryview(cache._extension(text).data))) == _lengths(text)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [text for item in items for text in _strings(item)]
