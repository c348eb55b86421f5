"""The fast read of a Gemini CLI file gives exactly what the exact read gives.

The exact read decodes every JSON Lines line fully (`jsonl.line_values`: orjson,
the stdlib for its refusals) and a legacy document whole (`document.whole`), and
keeps every message as a dict, as the reader always did. The fast read scans each
message once (`rawjson.scan_value`, or its pure twin without the C module), keeps
it as a `spans.MessageSpan` (a legacy document is walked message by message,
`document.stream`), and decodes it later one at a time: whole for the history,
with its long tool outputs and displays as head and JS length for the analysis
(`gemini.measured`). Both run on every committed Gemini recording and public
fixture and on mutated copies: tricky text, odd values, byte edits and the
hardening fuzzer's edits, the records Gemini's JSON Lines replay acts on (a
message appended again, edited or not; `$rewindTo` an existing or unknown id;
`$set` with and without messages), legacy documents re-written compact or
pretty, and hand-made corners. They must agree on the whole session, and the
analysis of the measured history must equal the analysis of the full one.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core import rawjson
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.jsvalues import MeasuredText, js_len
from doctor.sources import gemini
from doctor.sources.gemini import document, spans
from tests.hardening.mutations import EDITS, apply
from tests.sources import differential
from tests.sources.differential import EXAMPLES, MODES, ODD_VALUES, TRICKY_TEXT, dump, mutated_lines, raw_edit, retext

ROOT = Path(__file__).resolve().parents[1]
JSONL = sorted((ROOT / "recordings" / "gemini").glob("*/home/.gemini/tmp/*/chats/session-*.jsonl"))
LEGACY = sorted((ROOT / "fixtures" / "public" / "gemini-cli").glob("*.json"))
FILES = JSONL + LEGACY
KEYS = ["id", "type", "$rewindTo", "$set", "content", "toolCalls", "resultDisplay", "result", "functionResponse",
        "response", "output", "error", "name", "sessionId", "projectHash", "messages", "thoughts", "text", "args"]


def summary(path: Path) -> tuple[str, int]:
    """Everything the session holds, as text, and how many tool outputs of the history the analysis
    read were measured (MeasuredText)."""
    session = gemini.read(path)
    history, ui = list(session.history_to_measure()), list(session.ui_history_to_measure())
    measured = analyze_tool_result_retention(history, ui_history=ui)
    full = analyze_tool_result_retention(session.history(), ui_history=list(session.ui_history))
    assert (list(measured.results), measured.stats, measured.ui) == (list(full.results), full.stats, full.ui)
    assert outline(history) == outline(list(session.history()))
    assert outline(ui) == outline(list(session.ui_history))
    texts = [part["functionResponse"]["response"].get(key) for content in history for part in content["parts"]
             if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
             and isinstance(part["functionResponse"].get("response"), dict) for key in ("output", "error")]
    return repr({
        "history": list(session.history()), "ui": list(session.ui_history), "rows": list(measured.results),
        "stats": measured.stats, "scan": measured.ui, "issues": session.issues, "side": dict(session.side_channel),
        "meta": session.meta, "id": session.session_id, "started": session.started, "format": session.format,
    }), sum(type(text) is MeasuredText for text in texts)


def outline(value: object) -> str:
    """`value` as text with every string shown by its JS length and first 64 characters: what a
    MeasuredText keeps of it (everything else, numbers included, as it is)."""
    def walk(item):
        if isinstance(item, str):
            return js_len(item), item[:64]
        if isinstance(item, dict):
            return {key: walk(child) for key, child in item.items()}
        if isinstance(item, list):
            return [walk(child) for child in item]
        return item
    return repr(walk(value))


def use(patch, mode: str) -> None:
    """The C accelerator, or its pure-Python twins (as on a machine without a compiler)."""
    differential.use(patch, mode)
    if mode == "pure":
        patch.setattr(rawjson, "accelerated", False)
        patch.setattr(rawjson, "scan_value", rawjson.py_scan_value)


def read_or_refusal(path: Path) -> tuple[str, int]:
    try:
        return summary(path)
    except gemini.SourceError as exc:  # both reads must refuse a file alike
        return f"refused: {exc}", 0


@dataclass
class Fast:
    """What the fast read did: messages kept as spans, legacy documents streamed, texts measured."""

    spans: int = 0
    streamed: int = 0
    measured: int = 0


def agree(path: Path, monkeypatch, mode: str) -> Fast:
    """The fast read and the exact read of `path` agree; returns what the fast read did itself."""
    with monkeypatch.context() as patch:
        patch.setattr(spans, "scanned_record", lambda *args: None)
        patch.setattr(document, "stream", lambda path: None)
        expected, _ = read_or_refusal(path)
    fast = Fast()
    scanned_record, stream = spans.scanned_record, document.stream

    def counted_record(*args):
        kept = scanned_record(*args)
        fast.spans += kept is not None and kept[0] is not None
        return kept

    def counted_stream(path):
        streamed = stream(path)
        fast.streamed += streamed is not None
        fast.spans += len(streamed[1]) if streamed is not None else 0
        return streamed

    with monkeypatch.context() as patch:
        use(patch, mode)
        patch.setattr(spans, "scanned_record", counted_record)
        patch.setattr(document, "stream", counted_stream)
        actual, fast.measured = read_or_refusal(path)
    assert actual == expected
    return fast


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_read_the_same_fast_and_exactly(path: Path, mode: str, monkeypatch) -> None:
    fast = agree(path, monkeypatch, mode)
    if path.suffix == ".jsonl":  # every message line of a real recording is kept as a span
        assert fast.spans == sum(1 for line in path.read_bytes().splitlines() if isinstance(json.loads(line).get("id"), str))
    else:  # a legacy document is streamed
        assert fast.streamed == 1
    assert fast.spans > 0
    if mode == "pure":  # nothing is measured without the C scan
        assert fast.measured == 0
    elif "big-outputs" not in str(path):  # its final messages (after a `$set` checkpoint) hold only masked stubs
        assert fast.measured > 0


def replay_edits(data: bytes, rng: random.Random, text: str) -> bytes:
    """Records Gemini's replay acts on, inserted at random: a message appended again (edited or not),
    rewinds to known and unknown ids, `$set` updates with and without messages."""
    lines = data.splitlines(keepends=True)
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            messages.append(record)
    for _ in range(rng.randrange(4)):
        choice = rng.randrange(5)
        if choice == 0 and messages:
            record = dict(rng.choice(messages))
            if rng.random() < 0.5:
                record["content"] = text
            new = dump(record, rng)
        elif choice == 1:
            target = rng.choice(messages)["id"] if messages and rng.random() < 0.8 else "no-such-id"
            new = dump({"$rewindTo": target}, rng)
        elif choice == 2:
            new = dump({"$set": {"summary": text, "lastUpdated": "2026-12-03T00:00:00Z"}}, rng)
        elif choice == 3 and messages:
            new = dump({"$set": {"messages": rng.sample(messages, min(len(messages), 2))}}, rng)
        else:
            new = dump({"id": rng.choice(messages)["id"] if messages else "x", "$rewindTo": 5, "type": "user",
                        "content": [{"text": text}]}, rng)
        lines.insert(rng.randrange(1, len(lines) + 1) if lines else 0, new + b"\n")
    return b"".join(lines)


def mutated_document(data: bytes, rng: random.Random, text: str) -> bytes:
    """A legacy document with some messages re-written with tricky text or given odd values, written
    again compact or pretty, ASCII-escaped or not (lone surrogates raw when not), some lines edited."""
    record = json.loads(data)
    messages = record.get("messages")
    for index, message in enumerate(messages if isinstance(messages, list) else ()):
        if rng.random() < 0.35:
            messages[index] = message = retext(message, rng, text)
        if rng.random() < 0.1 and isinstance(message, dict):
            message[rng.choice(KEYS)] = rng.choice(ODD_VALUES)
    if rng.random() < 0.1:
        record[rng.choice(KEYS)] = rng.choice(ODD_VALUES)
    written = json.dumps(record, ensure_ascii=rng.random() < 0.3, indent=rng.choice([None, 2, "\t"]))
    lines = written.encode("utf-8", "surrogatepass").splitlines(keepends=True)
    return b"".join(raw_edit(line, rng) if rng.random() < 0.03 else line for line in lines)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(FILES), seed=st.integers(0, 2**32), text=TRICKY_TEXT,
       edits=st.lists(EDITS, max_size=2))
def test_mutated_copies_read_the_same_fast_and_exactly(source: Path, seed: int, text: str, edits, mode: str,
                                                       monkeypatch) -> None:
    rng = random.Random(seed)
    data = source.read_bytes()
    if source.suffix == ".json":
        data = mutated_document(data, rng, text)
    else:
        data = mutated_lines(replay_edits(data, rng, text), rng, text, KEYS)
    for edit in edits:
        data = apply(data, edit)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / source.name
        path.write_bytes(data)
        agree(path, monkeypatch, mode)


_LONG = r'é😀 long output\n\t\"quoted\" \u001b' * 20  # JSON text: 800 bytes, escapes and non-ASCII
_OUTPUT = '{"functionResponse":{"id":"c1","name":"n","response":{"output":"%s"}}}'


def _message(fields: str) -> bytes:
    return ('{"id":"m","timestamp":"t",%s}' % fields).encode()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("line", [
    b'{"id":"m1","id":"m2","type":"user","content":"dup"}',
    b'{"\\u0069d":"m3","type":"user","content":"escaped key"}',
    b'{"id":"\\ud800","type":"user","content":"lone surrogate id"}',
    b'{"id":"m4","type":"user","content":"a\\ud800b"}',
    b'{"id":"m5","type":"user","content":"x","n":' + b"1" * 400 + b"}",
    b'{"id":"m6","type":"user","content":"\xff\xfe"}',
    b'{"id":"m7","$rewindTo":"m1","type":"user"}',
    b'{"id":"m8","$rewindTo":null,"type":"user","content":"kept"}',
    b'{"id":"m9","type":"user","content":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'  {"id":"m10","type":"gemini","content":"spaced","toolCalls":[{"id":"c","name":"n","resultDisplay":"'
    + b"\\u00e9" * 300 + b'"}]}  \r',
    b'{"id":7,"type":"user","content":"numeric id"}',
    b'["id","m11"]',
    b'{"id":"m12","type":"user","content":NaN}',
    b'{"id":"m13","type":"user"',
    _message('"type":"user","content":[%s]' % (_OUTPUT % _LONG)),
    _message('"type":"user","content":%s' % (_OUTPUT % _LONG)),  # one part, not a list
    _message('"type":"user","content":[%s, "a prompt %s"]' % (_OUTPUT % _LONG, _LONG)),
    _message('"type":"user","content":[%s]' % (_OUTPUT % ("Output too large. Showing" + _LONG))),  # a sentinel
    _message('"type":"user","content":[%s]' % (_OUTPUT % ("\\u004futput too large. Showing" + _LONG))),
    _message('"type":"user","content":[%s]' % (_OUTPUT % ("\\ud83d\\ude00" * 60 + _LONG))),  # no 64-char head
    _message('"type":"user","content":[{"functionResponse":{"id":"c1","response":{"output":"%s\\ud800",'
             '"n":123456789012345678901234567890}}}]' % ("x" * 600)),
    _message('"id":"%s","type":"user","content":"a long id"' % ("x" * 300)),
    _message('"type":"gemini","content":"","toolCalls":[{"id":{},"name":"n","result":[%s]}]' % (_OUTPUT % "x")),
    _message('"type":"user","content":[{"functionResponse":{"id":"c1","response":{"error":"%s","output":7}}}]' % _LONG),
    _message('"type":"user","content":[{"functionResponse":{"id":"c1","response":{"output":"%s","output":""}}}]' % _LONG),
    _message('"type":"user","content":[{"functionResponse":{"id":"c1","response":{"output":"","output":"%s"}}}]' % _LONG),
    _message('"type":"user","content":[{"functionResponse":{"id":"c1","response":{"\\u006futput":"%s"}}}]' % _LONG),
    _message('"type":"user","content":[{"functionResponse":{"id":"c1","response":"%s"}}]' % _LONG),
    _message('"type":"user","content":[{"functionResponse":{"id":"c1","response":{"output":"%s"}},"text":"t"}]' % _LONG),
    _message('"type":"user","content":[1, %s]' % (_OUTPUT % _LONG)),
    _message('"type":"gemini","content":"%s","thoughts":[{"subject":"s","description":"%s"}],"toolCalls":['
             '{"id":"c1","name":"n","args":{"text":"%s"},"result":[%s],"resultDisplay":"%s"},'
             '{"id":"c2","name":"n","result":"%s","resultDisplay":{"fileDiff":"%s","fileName":"f"}},'
             '{"id":"c3","name":"n","result":%s,"resultDisplay":{"type":"shell_result","text":"%s","output":"%s"}}]'
             % (_LONG, _LONG, _LONG, _OUTPUT % _LONG, _LONG, _LONG, _LONG, _OUTPUT % _LONG, _LONG, _LONG)),
    _message('"type":"gemini","content":"","toolCalls":[{"id":"c1","name":"n","result":[%s],"resultDisplay":"%s"}, 5]'
             % (_OUTPUT % _LONG, _LONG)),
    _message('"type":"gemini","content":"","toolCalls":[{"id":"c1","name":"n","result":[%s],"resultDisplay":"%s",'
             '"resultDisplay":""}]' % (_OUTPUT % _LONG, _LONG)),
], ids=lambda line: repr(line[:40]) + f"…{len(line)}")
def test_lines_the_routes_could_disagree_on(line: bytes, mode: str, monkeypatch, tmp_path: Path) -> None:
    """Hand-made lines: duplicate and escaped keys, a long id, lone surrogates (id and body, beside a >64-bit integer),
    a 400-digit number, invalid UTF-8, an id beside a rewind (string or not), nesting too deep, whitespace and
    CR around a line, ids that are not strings, a line that is not an object, NaN, a torn line; long outputs
    where they are measured and where they are not (a prompt, model text, thoughts, arguments, a string
    result, structured displays), under sentinel headers (one escaped), with no 64-character head, as errors,
    as duplicate and escaped keys, in parts of other shapes; a call id that is an object (it once crashed)."""
    path = tmp_path / "session-x.jsonl"  # the line last, so that it is one of the final messages
    path.write_bytes(JSONL[0].read_bytes() + line + b"\n")
    agree(path, monkeypatch, mode)


_HEAD = b'{\n  "sessionId": "s",\n  "projectHash": "p",\n  "startTime": "t",\n  "lastUpdated": "t"'
_MESSAGES = b'[\n    {"id": "m1", "type": "user", "content": [%s]},\n    {"id": "m2", "type": "gemini", "content": "ok"}\n  ]' \
    % (_OUTPUT % _LONG).encode()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("data", [
    _HEAD + b',\n  "messages": ' + _MESSAGES + b"\n}\n",
    _HEAD + b',\n  "messages": []\n}',
    _HEAD + b',\n  "messages": ' + _MESSAGES + b',\n  "kind": "main", "n": [1, -2.5e3, true, false, null, {"a": {}}]\n}',
    _HEAD + b',\n  "messages": ' + _MESSAGES + b',\n  "messages": 5\n}',
    _HEAD + b',\n  "messages": 5,\n  "messages": ' + _MESSAGES + b"\n}",
    _HEAD + b',\n  "messages": [1, {"id": "m1", "type": "user", "content": "x"}]\n}',
    _HEAD + b',\n  "messages": ' + _MESSAGES + b"\n} x",
    _HEAD + b',\n  "messages": ' + _MESSAGES + b",\n}",
    _HEAD + b',\n  "messages": ' + _MESSAGES,
    _HEAD + b',\n  "$rewindTo": "m1", "messages": ' + _MESSAGES + b"\n}",
    _HEAD + b',\n  "id": "m9", "type": "user", "messages": ' + _MESSAGES + b"\n}",
    b'{"sessionId": 5, "projectHash": "p", "messages": ' + _MESSAGES + b"}",
    _HEAD + b',\n  "messages": ' + _MESSAGES.replace(b"long output", b"long \\udc00output", 1) + b"\n}",
    _HEAD + b',\n  "messages": ' + _MESSAGES.replace(b"long output", b"long \\udc00output", 1).replace(
        b'"content": "ok"', b'"content": [{"text": "ok", "n": 123456789012345678901234567890}]') + b"\n}",
    _HEAD + b',\n  "messages": ' + _MESSAGES.replace(b"long output", b"long \xff output", 1) + b"\n}",
    _HEAD + b',\n  "n": 1e400, "big": 123456789012345678901234567890, "messages": ' + _MESSAGES + b"\n}",
    _HEAD + b',\n  "n": NaN, "messages": ' + _MESSAGES + b"\n}",
    _HEAD + b',\n  "messages": [{"id": "deep", "x": ' + b"[" * 1021 + b"]" * 1021 + b"}]\n}",
    _HEAD + b',\n  "messages": [{"id": "deep", "x": ' + b"[" * 1022 + b"]" * 1022 + b"}]\n}",
    b"\xef\xbb\xbf" + _HEAD + b',\n  "messages": ' + _MESSAGES + b"\n}",
    _HEAD.replace(b'"sessionId"', b'"\\u0073essionId"') + b',\n  "\\u006dessages": ' + _MESSAGES + b"\n}",
    _HEAD + b',\n  "messages": ' + _MESSAGES.replace(b'"id": "m2"', b'"id": "m1"') + b"\n}",
    _HEAD + b',\n  "messages": ' + _MESSAGES.replace(b'"id": "m2"', b'"id": "%s"' % (b"x" * 300)) + b"\n}",
], ids=lambda data: repr(data[-40:]) + f"…{len(data)}")
def test_documents_the_stream_could_read_apart(data: bytes, mode: str, monkeypatch, tmp_path: Path) -> None:
    """Hand-made legacy documents: empty messages, keys after messages and values of every kind, messages
    twice (the last one wins), a message that is not an object, bytes after the document, a trailing comma,
    a torn document, a document routed as a rewind or a message, bad session keys, a lone surrogate (alone
    and beside a >64-bit integer, which the stdlib then reads for the whole document) and invalid UTF-8 in a
    long output, numbers orjson reads apart or refuses, nesting at orjson's limit and
    past it, a BOM, escaped keys, an id twice, a long id."""
    path = tmp_path / "session-x.json"
    path.write_bytes(data)
    agree(path, monkeypatch, mode)


@pytest.mark.parametrize("path", [JSONL[-1], LEGACY[0]], ids=lambda p: p.name)
def test_the_report_is_the_same_without_the_c_module(path: Path) -> None:
    """`doctor memory --json` as a user runs it, with the C scan and with DOCTOR_PURE_PYTHON=1 (the
    install without a compiler): the same report, to the byte."""
    def report(**env: str) -> bytes:
        return subprocess.run([sys.executable, "-m", "doctor", "memory", "--json", "--results", "--include-previews",
                               str(path)], env={**os.environ, **env}, check=True, capture_output=True).stdout

    accelerated = report()
    assert b'"toolResultCount"' in accelerated
    assert report(DOCTOR_PURE_PYTHON="1") == accelerated
