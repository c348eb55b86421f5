"""The span read of a Gemini CLI file gives exactly what the exact read gives.

The exact read decodes every line fully (`jsonl.line_values`: orjson, the stdlib
for its refusals) and keeps every message as a dict, as the reader always did;
the span read routes message lines with a typed msgspec decode
(`spans.fast_message_id`), keeps them as file spans and decodes them one at a time
later. Both run on every committed Gemini recording and public fixture and on
mutated copies: tricky text, odd values, byte edits and the hardening fuzzer's
edits, plus the records Gemini's JSON Lines replay acts on (a message appended
again, edited or not; `$rewindTo` an existing or unknown id; `$set` with and
without messages). They must agree on the whole session. The analysis of the
measured UI history (long displays as head and JS length) must equal the
analysis of the full one.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core.analysis import analyze_tool_result_retention
from doctor.sources import gemini
from doctor.sources.gemini import spans
from tests.hardening.mutations import EDITS, apply
from tests.sources.differential import EXAMPLES, TRICKY_TEXT, dump, mutated_lines

ROOT = Path(__file__).resolve().parents[1]
JSONL = sorted((ROOT / "recordings" / "gemini").glob("*/home/.gemini/tmp/*/chats/session-*.jsonl"))
FILES = JSONL + sorted((ROOT / "fixtures" / "public" / "gemini-cli").glob("*.json"))
KEYS = ["id", "type", "$rewindTo", "$set", "content", "toolCalls", "resultDisplay", "result", "functionResponse",
        "response", "output", "name", "sessionId", "projectHash", "messages", "thoughts", "text"]


def summary(path: Path) -> str:
    session = gemini.read(path)
    measured = analyze_tool_result_retention(session.history_to_measure(), ui_history=session.ui_history_to_measure())
    full = analyze_tool_result_retention(session.history_to_measure(), ui_history=list(session.ui_history))
    assert (list(measured.results), measured.stats, measured.ui) == (list(full.results), full.stats, full.ui)
    return repr({
        "history": list(session.history()), "ui": list(session.ui_history), "rows": list(measured.results),
        "stats": measured.stats, "scan": measured.ui, "issues": session.issues, "side": dict(session.side_channel), "meta": session.meta,
        "id": session.session_id, "started": session.started, "format": session.format,
    })


def agree(path: Path, monkeypatch) -> int:
    """The span read and the exact read of `path` agree; returns how many lines took the span route."""
    with monkeypatch.context() as patch:
        patch.setattr(spans, "fast_message_id", lambda line: None)
        expected = summary(path)
    taken = 0
    original = spans.fast_message_id

    def counted(line):
        nonlocal taken
        ident = original(line)
        taken += ident is not None
        return ident

    with monkeypatch.context() as patch:
        patch.setattr(spans, "fast_message_id", counted)
        assert summary(path) == expected
    return taken


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


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_read_the_same_by_spans_and_exactly(path: Path, monkeypatch) -> None:
    taken = agree(path, monkeypatch)
    if path.suffix == ".jsonl":  # every message line of a real recording takes the span route
        assert taken == sum(1 for line in path.read_bytes().splitlines() if isinstance(json.loads(line).get("id"), str))
        assert taken > 0


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(FILES), seed=st.integers(0, 2**32), text=TRICKY_TEXT,
       edits=st.lists(EDITS, max_size=2))
def test_mutated_copies_read_the_same_by_spans_and_exactly(source: Path, seed: int, text: str, edits,
                                                           monkeypatch) -> None:
    rng = random.Random(seed)
    data = mutated_lines(replay_edits(source.read_bytes(), rng, text), rng, text, KEYS)
    for edit in edits:
        data = apply(data, edit)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / source.name
        path.write_bytes(data)
        try:
            agree(path, monkeypatch)
        except gemini.SourceError as exc:  # both reads must refuse it alike
            with monkeypatch.context() as patch:
                patch.setattr(spans, "fast_message_id", lambda line: None)
                with pytest.raises(gemini.SourceError) as exact:
                    gemini.read(path)
            assert str(exact.value) == str(exc)


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
], ids=lambda line: repr(line[:40]) + f"…{len(line)}")
def test_lines_the_routes_could_disagree_on(line: bytes, monkeypatch, tmp_path: Path) -> None:
    """Hand-made lines: duplicate and escaped keys, lone surrogates (id and body), a 400-digit number,
    invalid UTF-8, an id beside a rewind (string or not), nesting too deep, whitespace and CR around a
    line, ids that are not strings, a line that is not an object, NaN, a torn line."""
    source = JSONL[0].read_bytes().splitlines(keepends=True)
    path = tmp_path / "session-x.jsonl"
    path.write_bytes(b"".join(source[:3]) + line + b"\n" + b"".join(source[3:]))
    agree(path, monkeypatch)
