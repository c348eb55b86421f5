"""The fast read of a Qwen recording gives exactly what the exact read gives.

The exact read parses every line fully (`parse_line`, as Qwen's loader does) and
decodes every message; the fast read decodes lines field by field, counts JS
lengths from the raw bytes and, for the retention analysis, leaves long outputs
undecoded (`MeasuredText`). Both are run on every committed Qwen recording and on
mutated copies (invalid UTF-8, lone surrogates, escape-heavy and astral outputs,
sentinel heads written with escapes, same-named nested keys, fragments, torn,
glued and re-serialised lines), with the C accelerator and with the pure-Python
counters, and must agree on the analysis, every per-result row, the UI scan, the
issues and the side channels.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.assemble import ReportOptions, resolve_settings
from doctor.core import rawjson
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.jsvalues import MeasuredText
from doctor.sources import qwen
from doctor.sources.qwen import records as records_module
from doctor.sources.qwen import transcript

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = sorted((ROOT / "recordings" / "qwen").glob("*/session*.jsonl"))
MUTATION_BASES = [ROOT / "recordings" / "qwen" / name / "session.jsonl"
                  for name in ("persist-gate", "shell-truncation", "orphaned", "images", "rewind")]
EXAMPLES = max(30, int(os.environ.get("DOCTOR_DIFFERENTIAL_EXAMPLES", "400")) // 8)
MODES = ["accelerated", "pure"]


def _use(monkeypatch, mode: str) -> None:
    """Point the reader at the C counters or at the exact pure-Python ones."""
    if mode == "accelerated":
        if not rawjson.accelerated:
            if os.environ.get("CI"):
                pytest.fail("the C accelerator was not built (setup.py's optional extension)")
            pytest.skip("the C accelerator is not built here")
        return
    monkeypatch.setattr(transcript, "scan_line", rawjson.py_scan_line)
    monkeypatch.setattr(transcript, "string_span", rawjson.py_string_span)
    monkeypatch.setattr(transcript, "offset_in", None)
    monkeypatch.setattr(records_module, "string_units", rawjson.py_string_units)


def _summary(path: Path, *, measured: bool) -> dict:
    session = qwen.read(path)
    budgets = resolve_settings(ReportOptions(use_default_settings_files=False, env={}), None).budgets
    history = session.history_to_measure() if measured else session.history()
    ui_history = session.ui_history_to_measure() if measured else session.ui_history
    analysis = analyze_tool_result_retention(history, ui_history=ui_history, budgets=budgets)
    return {
        "stats": analysis.stats,
        "rows": list(analysis.results),
        "tools": analysis.per_tool(),
        "by_turn": analysis.chars_by_turn(),
        "ui": analysis.ui,
        "issues": session.issues,
        "side": dict(session.side_channel),
        "meta": session.meta,
        "id": session.session_id,
    }


def _exact(path: Path, monkeypatch) -> dict:
    """Every line through the full parse, the history decoded whole."""
    with monkeypatch.context() as patch:
        patch.setattr(transcript.TranscriptIndex, "add_fields", lambda self, *args: False)
        return _summary(path, measured=False)


def _agree(path: Path, monkeypatch, mode: str) -> None:
    try:
        expected = _exact(path, monkeypatch)
    except qwen.SourceError:  # a mutation can leave no record at all: both must refuse it
        with pytest.raises(qwen.SourceError):
            _summary(path, measured=True)
        return
    _use(monkeypatch, mode)
    assert _summary(path, measured=False) == expected
    assert _summary(path, measured=True) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.parent.name + "/" + p.name)
def test_recordings_read_the_same_fast_and_exact(path: Path, mode: str, monkeypatch) -> None:
    _agree(path, monkeypatch, mode)


def test_long_outputs_are_measured_not_decoded(monkeypatch) -> None:
    """The wiring: the measured history does hold MeasuredText for the long outputs."""
    session = qwen.read(ROOT / "recordings" / "qwen" / "multi-turn" / "session.jsonl")
    outputs = [p["functionResponse"]["response"].get("output") for c in session.history_to_measure()
               for p in c["parts"] if "functionResponse" in p]
    measured = [o for o in outputs if type(o) is MeasuredText]
    assert measured and all(len(o) < o.js_length for o in measured)
    exact = [p["functionResponse"]["response"].get("output") for c in session.history()
             for p in c["parts"] if "functionResponse" in p]
    assert not any(type(o) is MeasuredText for o in exact)
    displays = [tool["resultDisplay"] for item in session.ui_history_to_measure() if item["type"] == "tool_group"
                for tool in item["tools"]]
    texts = [d for d in displays if type(d) is MeasuredText] + [d[k] for d in displays if type(d) is dict
                                                                 for k in ("text", "output") if type(d.get(k)) is MeasuredText]
    assert texts and all(len(t) < t.js_length for t in texts)
    assert not any(type(tool["resultDisplay"]) is MeasuredText for item in session.ui_history
                   if item["type"] == "tool_group" for tool in item["tools"])


# Text that stresses the byte counters: escapes, controls, accents, CJK, astral, lone surrogates.
_TRICKY_CHARS = list('ab "\\/\n\t\r\b\f\x00\x1b\x7fuéß中文😀𝔘\ud800\udbff\udc00\udfff') + ["\u2028"]
_TRICKY = st.text(alphabet=st.sampled_from(_TRICKY_CHARS), min_size=0, max_size=2500)
_SENTINELS = ["Tool output was too large and has been truncated.", "<persisted-output>", "Tool output truncated.",
              "[Old tool result content cleared]", "Output too large (1 MB)"]


def _dump(value, rng: random.Random) -> bytes:
    text = json.dumps(value, ensure_ascii=rng.random() < 0.3,
                      separators=(",", ":") if rng.random() < 0.8 else (", ", ": "))
    return text.encode("utf-8", "surrogatepass")  # raw lone surrogates: invalid UTF-8, on purpose


def _tool_result_lines(lines: list[bytes]) -> list[int]:
    found = []
    for index, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if type(record) is dict and record.get("type") == "tool_result" and isinstance(record.get("message"), dict):
            found.append(index)
    return found


_MASKED_POINTER = "\nOutput too large. Full output available at: /tmp/doctor-test/masked/output.txt"
OPS = 15


def _mutate(lines: list[bytes], rng: random.Random, text: str, op: int | None = None) -> list[bytes]:
    lines = list(lines)
    targets = _tool_result_lines(lines) or [0]
    index = rng.choice(targets)
    line = lines[index]
    op = rng.randrange(OPS) if op is None else op
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    parts = record["message"].get("parts") if type(record) is dict and isinstance(record.get("message"), dict) else None
    response = None
    if isinstance(parts, list) and parts and type(parts[0]) is dict and type(parts[0].get("functionResponse")) is dict:
        response = parts[0]["functionResponse"].get("response")
    long = "x" * rng.choice([0, 700, 1100, 1500]) + text + "y" * rng.choice([0, 600, 1200])
    if op <= 2 and type(response) is dict:  # a long, tricky output (op 2: under a sentinel header)
        response["output"] = (rng.choice(_SENTINELS) if op == 2 else "") + long
        lines[index] = _dump(record, rng)
    elif op == 3 and type(response) is dict:  # a sentinel header whose first character is an escape
        response["output"] = "Tool output was too large and has been truncated." + long
        lines[index] = _dump(record, rng).replace(b'"output":"T', b'"output":"\\u0054', 1)
    elif op == 4 and type(response) is dict:  # a same-named key before the real output, and "" values
        parts[0]["functionResponse"] = {"args": {"output": long, "note": ""}, **parts[0]["functionResponse"]}
        response["output"] = long if rng.random() < 0.5 else ""
        lines[index] = _dump(record, rng)
    elif op == 5:  # invalid UTF-8 somewhere in the line
        at = rng.randrange(len(line) + 1)
        lines[index] = line[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"]) + line[at:]
    elif op == 6:  # a fragment: the same record again
        lines.insert(index + 1, line)
    elif op == 7:  # torn
        lines[index] = line[: rng.randrange(len(line) + 1)]
    elif op == 8 and index + 1 < len(lines):  # two records glued on one line
        lines[index : index + 2] = [line + lines[index + 1]]
    elif op == 9:  # CRLF and padding
        lines[index] = b"  " + line + b" \r"
    elif op == 11 and type(response) is dict:  # Gemini's masking notice: its pointer comes last, past any head
        response["output"] = "<tool_output_masked>\n" + long + "x" * 9000 + _MASKED_POINTER
        lines[index] = _dump(record, rng)
    elif op in (12, 13) and type(record) is dict and type(record.get("toolCallResult")) is dict:  # a long display: a string, a shell result
        shell = {"type": "shell_result", "version": 1, "text": long, "output": long if rng.random() < 0.5 else long[::-1],
                 "directory": "/tmp", "exitCode": 0, "signal": None, "pid": 7, "error": None, "outcome": "completed",
                 "truncated": False, "notices": [], "outputFiles": []}
        record["toolCallResult"]["resultDisplay"] = long if op == 12 else shell
        lines[index] = _dump(record, rng)
    elif op == 14 and type(record) is dict and isinstance(record.get("toolCallResult"), dict) and isinstance(record["toolCallResult"].get("callId"), str):
        old = json.dumps(record["toolCallResult"]["callId"]).encode()  # a call id long enough to be shortened
        lines = [line.replace(old, json.dumps("call-" + "7" * 400).encode()) for line in lines]
    elif type(record) is dict:  # re-serialised with the keys reversed and a long prompt-like output
        if type(response) is dict:
            response["output"] = long
        lines[index] = _dump(dict(reversed(list(record.items()))), rng)
    return lines


@pytest.mark.parametrize("mode", MODES)
def test_mutated_recordings_read_the_same_fast_and_exact(mode: str, tmp_path: Path, monkeypatch) -> None:
    bases = {path: path.read_bytes().split(b"\n") for path in MUTATION_BASES}

    @settings(max_examples=EXAMPLES)
    @given(base=st.sampled_from(MUTATION_BASES), seed=st.integers(0, 2**32), texts=st.lists(_TRICKY, min_size=1, max_size=3))
    def check(base: Path, seed: int, texts: list[str]) -> None:
        rng = random.Random(seed)
        lines = bases[base]
        for text in texts:
            lines = _mutate(lines, rng, text)
        path = tmp_path / "session.jsonl"
        path.write_bytes(b"\n".join(lines))
        with monkeypatch.context() as patch:
            _agree(path, patch, mode)

    check()



# Every tricky character but the lone surrogates (they send the whole line to the exact path).
_ALL_TRICKY = "".join(c for c in _TRICKY_CHARS if not "\ud800" <= c <= "\udfff") * 30


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", range(OPS))
def test_each_mutation_reads_the_same_fast_and_exact(op: int, mode: str, tmp_path: Path, monkeypatch) -> None:
    """Each mutation once, on a long output holding every tricky character (the fuzzer may miss one)."""
    for base in MUTATION_BASES[:2]:
        lines = _mutate(base.read_bytes().split(b"\n"), random.Random(op), _ALL_TRICKY, op)
        path = tmp_path / f"{op}-{base.parent.name}.jsonl"
        path.write_bytes(b"\n".join(lines))
        with monkeypatch.context() as patch:
            _agree(path, patch, mode)
