"""Format detection works whatever the size of a session's first records, for every agent.

The common support case: a user pasted a big log into the first prompt, so the first records are far
longer than the bytes any detector reads up front. Each case takes a real recording, puts a 640 KB log
into its first prompt (every record that carries it), and runs `doctor memory --json` through the CLI:
the session must be recognised as the same agent with the same tool-result figures.
"""

import io
import json
import shutil
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from doctor import cli
from doctor.sources import sniffing
from doctor.sources.sniffing import Head, outline_values

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
SESSIONS = {
    "qwen": RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl",
    "claude": next(RECORDINGS.glob("claude/big-outputs/home/.claude/projects/*/*.jsonl")),
    "codex": next(RECORDINGS.glob("codex/big-outputs/home/.codex/sessions/*/*/*/*.jsonl")),
    "gemini": next(RECORDINGS.glob("gemini/big-outputs/home/.gemini/tmp/*/chats/*.jsonl")),
}
PROMPT = b'"go"'  # every recording's first prompt
LOG = "".join(f'2026-12-02T11:{i % 60:02d}:00 worker[{i}]\tERROR "quoted" path=C:\\\\tmp\\\\x é 漢字 😀\n'
              for i in range(8_000))


def with_big_first_prompt(source: Path, folder: Path) -> Path:
    """A copy of the session (its folder, so spill files come along) whose first prompt holds LOG."""
    copy = folder / "copy"
    shutil.copytree(source.parent, copy)
    path = copy / source.name
    pasted = json.dumps("go\n" + LOG, ensure_ascii=False).encode()
    lines = [line.replace(PROMPT, pasted) for line in path.read_bytes().split(b"\n")]
    path.write_bytes(b"\n".join(lines))
    first_prompt = next(i for i, line in enumerate(lines) if pasted in line)
    assert sum(map(len, lines[:first_prompt])) < sniffing.HEAD_BYTES < len(lines[first_prompt])  # cut by the head
    return path


def with_big_base_instructions(source: Path, folder: Path) -> Path:
    """A Codex rollout whose first record (session_meta) carries 640 KB more of base instructions,
    as with a big `model_instructions_file`."""
    copy = folder / "copy"
    shutil.copytree(source.parent, copy)
    path = copy / source.name
    first, rest = path.read_bytes().split(b"\n", 1)
    assert first.count(b'"base_instructions":{"text":"') == 1
    grown = first.replace(b'"base_instructions":{"text":"',
                          b'"base_instructions":{"text":"' + json.dumps(LOG, ensure_ascii=False)[1:-1].encode())
    path.write_bytes(grown + b"\n" + rest)
    assert len(grown) > sniffing.HEAD_BYTES
    return path


def memory_json(capsys, path: Path) -> tuple[int, dict, str]:
    code = cli.main(["memory", str(path), "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else {}, err


def figures(report: dict) -> tuple:
    return report["source"]["agent"], report["source"]["format"], report["toolResultRetention"]


@pytest.mark.parametrize("agent", sorted(SESSIONS))
def test_a_huge_first_prompt_is_still_recognised(agent, tmp_path, capsys):
    path = with_big_first_prompt(SESSIONS[agent], tmp_path)
    code, report, err = memory_json(capsys, path)
    assert "unknown session format" not in err
    assert code in (0, 1, 3), err
    original_code, original, _ = memory_json(capsys, SESSIONS[agent])
    assert report["source"]["agent"] == agent
    assert figures(report) == figures(original)


def test_a_huge_first_record_of_a_codex_rollout_is_still_recognised(tmp_path, capsys):
    path = with_big_base_instructions(SESSIONS["codex"], tmp_path)
    code, report, err = memory_json(capsys, path)
    assert code in (0, 1, 3), err
    assert figures(report) == figures(memory_json(capsys, SESSIONS["codex"])[1])


GEMINI_LEGACY = sorted((RECORDINGS.parent / "fixtures" / "public" / "gemini-cli").glob("*.json"))


@pytest.mark.parametrize("path", sorted(RECORDINGS.rglob("meta.json")), ids=lambda p: str(p.relative_to(RECORDINGS)))
def test_a_recordings_metadata_file_is_not_a_session(path, capsys):
    """Every recording's meta.json (a Qwen one carries sessionId and projectHash, like a Gemini
    ConversationRecord) is refused: one line naming the file, exit 2, nothing on stdout."""
    code = cli.main(["memory", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and "unknown session format" in err, err


@pytest.mark.parametrize("path", GEMINI_LEGACY, ids=lambda p: p.name)
def test_a_pretty_printed_gemini_session_with_a_huge_first_message_is_still_recognised(path, tmp_path, capsys):
    """Legacy ConversationRecords are pretty-printed: the sniffer outlines the head of the document, and
    the session keys come before `messages`, however long the first message is."""
    document = json.loads(path.read_text())
    assert isinstance(document["messages"][0]["content"], (str, list))
    document["messages"][0]["content"] = [{"text": LOG}]
    copy = tmp_path / path.name
    copy.write_text(json.dumps(document, indent=2, ensure_ascii=False))
    assert copy.read_bytes().find(b'"messages"') < sniffing.HEAD_BYTES < copy.stat().st_size
    code, report, err = memory_json(capsys, copy)
    assert code in (0, 1, 3), err
    original = memory_json(capsys, path)[1]
    assert report["source"]["agent"] == "gemini"
    assert report["toolResultRetention"] == original["toolResultRetention"]


def test_detection_does_not_hold_a_huge_first_line_in_memory(tmp_path):
    path = with_big_first_prompt(SESSIONS["qwen"], tmp_path)
    big = path.read_bytes()
    path.write_bytes(big.replace(json.dumps("go\n" + LOG, ensure_ascii=False).encode(),
                                 json.dumps("go\n" + LOG * 12, ensure_ascii=False).encode(), 1))
    assert path.stat().st_size > 8_000_000
    tracemalloc.start()
    try:
        head = Head.read(path)
        (record,) = head.records(1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert record["type"] == "user" and record["message"]["parts"][0]["text"].startswith("go\n2026")
    assert peak < 1_000_000  # the 8 MB line streamed past, a chunk at a time


# --- the outline against a model of it, on any JSON -------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=12) | st.dictionaries(st.text(max_size=8), children, max_size=6),
    max_leaves=60,
)


def expected_outline(value, depth=0):
    if depth > sniffing.MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {key: expected_outline(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [expected_outline(item, depth + 1) for item in value[: sniffing.KEEP_ITEMS]]
    if isinstance(value, str):
        return value[: sniffing.KEEP_CHARS]
    return value


@given(st.lists(json_values, min_size=1, max_size=4), st.sampled_from([1, 3, 64, 1 << 16]))
def test_outline_of_json_lines_matches_the_model(values, chunk):
    data = b"\n".join(json.dumps(value, ensure_ascii=bool(chunk % 2)).encode() for value in values) + b"\n"
    original, sniffing.CHUNK = sniffing.CHUNK, chunk
    try:
        outlined = outline_values(io.BytesIO(data), len(values))
    finally:
        sniffing.CHUNK = original
    assert outlined == [expected_outline(json.loads(json.dumps(value))) for value in values]


def test_deep_and_invalid_lines_outline_without_recursion():
    data = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b',"b":2}\nnot json\n{"c":1,"d":{"e":[1,'  # torn
    assert outline_values(io.BytesIO(data), 5) == [{"a": [[[[[[[[None]]]]]]]], "b": 2}, None, {"c": 1}]


@given(st.lists(json_values, min_size=1, max_size=6), st.sampled_from([1, 7, 40]), st.sampled_from([1, 3, 64]),
       st.booleans())
@example(values=[[None]], head_bytes=7, chunk=1, torn=False)  # the head ends on a line's end: read on past it
def test_head_values_read_one_at_a_time_match_the_model(tmp_path_factory, values, head_bytes, chunk, torn):
    """A Head reads values as sniffers ask for them, parsing lines inside the head and resuming the
    outline from a byte offset past it; asked one by one or all at once, it gives the model's outline."""
    lines = [json.dumps(value).encode() for value in values]
    data = b"\n".join(lines[:2] + [b"not json"] + lines[2:]) + b"\n"
    if torn:
        data = data[:-3]
    path = tmp_path_factory.mktemp("head") / "values.jsonl"
    path.write_bytes(data)
    originals = sniffing.HEAD_BYTES, sniffing.CHUNK
    sniffing.HEAD_BYTES, sniffing.CHUNK = head_bytes, chunk
    try:
        stepwise = Head.read(path)
        one_by_one = [stepwise.values(n) for n in range(1, len(values) + 3)][-1]
        at_once = Head.read(path).values(len(values) + 2)
    finally:
        sniffing.HEAD_BYTES, sniffing.CHUNK = originals
    model = outline_values(io.BytesIO(data), len(values) + 2)
    assert one_by_one == at_once == model
    if not torn:
        expected = [expected_outline(json.loads(json.dumps(value))) for value in values]
        assert model == expected[:2] + [None] + expected[2:]



# Lines the stdlib parser and the scanner could read differently, each of which must outline as the scanner does.
ODD_LINES = [b"NaN", b"[1, Infinity]", b"-Infinity", b'\xef\xbb\xbf{"a": 1}', b'{"a": 1} {"b": 2}', b"01", b"1e400",
             b"123456789012345678901234567890", b'"\\ud800 lone"', b'"tab\there"', b'{"k": "\xff"}', b"   ", b"",
             b'\x00{"a": 1}', b'{"a": 1}\r', b"[" * 3000 + b"]" * 3000, b'{"' + b"k" * 300 + b'": [' + b"1," * 20 + b"1]}",
             b'{"a": 1, "a": [2], "b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"j": 1}}}}}}}}}']


@given(st.lists(json_values.map(lambda value: json.dumps(value, ensure_ascii=False).encode())
                | st.sampled_from(ODD_LINES), min_size=1, max_size=8))
def test_lines_past_the_head_outline_as_the_scanner_does(tmp_path_factory, lines):
    """Past the head, a line the first chunk holds whole is parsed and outlined (`sniffing._outline`)
    instead of scanned: whatever the line, the Head gives what the scanner gives."""
    data = b'{"first": "' + b"x" * 100 + b'"}\n' + b"\n".join(lines) + b"\n"
    path = tmp_path_factory.mktemp("past") / "values.jsonl"
    path.write_bytes(data)
    original, sniffing.HEAD_BYTES = sniffing.HEAD_BYTES, 16  # the first line runs past the head
    try:
        head = Head.read(path).values(len(lines) + 2)
    finally:
        sniffing.HEAD_BYTES = original
    assert head == outline_values(io.BytesIO(data), len(lines) + 2)
