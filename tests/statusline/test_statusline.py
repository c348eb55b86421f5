"""`doctor statusline` on real recordings that grow line by line: its figures are `doctor memory --json`'s.

Each recording is copied into a throwaway transcript a few lines at a time (every line, for Qwen;
and once with half a line still being written, which is not counted), the status line runs after each step through the
real entry point with the agent's stdin shape, and its numbers are compared with `doctor memory
--json` of the same file at that moment. A resumed call must start reading where the last one
stopped, and for Qwen rebuild the history only where the recording's chain did not just grow;
a truncated or rewritten file, a branch, another fragment of an earlier record, or a gap filled
late must be read again and still give the right figures.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.sources.qwen.history import ResumableHistory
from doctor.statusline import cache
from doctor.statusline.resume import STATES
from tests.report.report_support import run_cli

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = sorted(p for p in (ROOT / "tests/recordings/claude").glob("*/home/.claude/projects/*/*.jsonl"))
QWEN = sorted((ROOT / "tests/recordings/qwen").glob("*/session.jsonl"))
LINE = re.compile(r"^doctor: ([\d,]+) chars \(~([\d,]+) tok\) in ([\d,]+) tool results? · ([\d,]+) oversized"
                  r"(?: · most: (.+) ([\d,]+))?\n$")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("QWEN_HOME", "CLAUDE_CONFIG_DIR", "DOCTOR_CONFIG", "QWEN_CODE_PROJECT_DIR", "QWEN_CODE_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)


def _status(capsys, monkeypatch, agent: str, payload: dict | bytes) -> tuple[int, str, str]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    return run_cli(capsys, "statusline", agent)


def _line_figures(out: str) -> tuple:
    match = LINE.match(out)
    assert match, out
    number = lambda text: int(text.replace(",", ""))  # noqa: E731
    return (number(match[3]), number(match[1]), number(match[2]), number(match[4]),
            match[5], number(match[6]) if match[6] else None)


def _memory_figures(capsys, transcript: Path) -> tuple:
    code, out, err = run_cli(capsys, "memory", "--json", str(transcript))
    assert code in (0, 3), err
    data = json.loads(out)
    assert data["retention"]["available"], data["retention"]
    qwen, retention, own = data["toolResultRetention"], data["retention"], data.get("agentMeasure")
    top = retention["perTool"][0] if retention["perTool"] else {"tool": None, "chars": None}
    if own is not None:  # another agent's line shows its own measure: what the model received, its tokens
        return (qwen["toolResultCount"], own["sent"], own["sentTokens"], qwen["oversizedResultCount"],
                top["tool"], top.get("sent"))
    return (qwen["toolResultCount"], qwen["totalChars"], retention["totalTokens"], qwen["oversizedResultCount"],
            top["tool"], top["chars"])


def _payload(agent: str, transcript: Path) -> dict:
    return {"session_id": "s", "transcript_path": str(transcript), "cwd": str(transcript.parent)}


class FeedSpy:
    """Where each state's feed started: a resumed call must begin at the previous end."""

    def __init__(self, monkeypatch):
        self.starts: list[int] = []
        for state in STATES.values():
            original = state.feed

            def feed(self_, *, whole_lines_only, _original=original):
                if whole_lines_only:
                    self.starts.append(self_.offset)
                return _original(self_, whole_lines_only=whole_lines_only)

            monkeypatch.setattr(state, "feed", feed)


class HistorySpy:
    """Where each extension of a Qwen state's history started: position 0 is a rebuild."""

    def __init__(self, monkeypatch):
        self.starts: list[int] = []
        original = ResumableHistory.extend

        def extend(self_, records, start, **kwargs):
            self.starts.append(start)
            return original(self_, records, start, **kwargs)

        monkeypatch.setattr(ResumableHistory, "extend", extend)

    @property
    def rebuilds(self) -> int:
        return self.starts.count(0)


def _chain_breaks(lines: list[bytes]) -> int:
    """Records whose parent is not the record on the line before: where Qwen's chain did not just grow."""
    uuids = [json.loads(line).get("uuid") for line in lines]
    return sum(1 for before, line in zip(uuids, lines[1:]) if json.loads(line).get("parentUuid") != before)


def _growth_points(lines: list[bytes]) -> list[int]:
    count = len(lines)
    return sorted({1, max(1, count // 4), max(1, count // 2), max(1, 3 * count // 4), count})


@pytest.mark.parametrize("agent, recording", [*(("claude", p) for p in CLAUDE), *(("qwen", p) for p in QWEN)],
                         ids=lambda value: value if isinstance(value, str) else value.parent.name
                         if value.name == "session.jsonl" else value.parents[3].name)
def test_figures_equal_doctor_memory_as_the_transcript_grows(tmp_path, capsys, monkeypatch, agent, recording):
    lines = recording.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / "project" / recording.name
    transcript.parent.mkdir()
    spy = FeedSpy(monkeypatch)
    written = 0
    for point in _growth_points(lines):
        with open(transcript, "ab") as handle:
            handle.writelines(lines[written:point])
        size_before = transcript.stat().st_size - sum(len(line) for line in lines[written:point])
        written = point
        code, out, err = _status(capsys, monkeypatch, agent, _payload(agent, transcript))
        assert code == 0 and err == ""
        assert _line_figures(out) == _memory_figures(capsys, transcript), f"after {point} of {len(lines)} lines"
        if len(spy.starts) > 1:
            assert spy.starts[-1] == size_before, "the resumed read did not start where the last one ended"

    # Half of a line the agent is still writing: not counted (the figures of the complete lines), not saved.
    extra = lines[len(lines) // 2]
    complete = _memory_figures(capsys, transcript)
    with open(transcript, "ab") as handle:
        handle.write(extra[: len(extra) // 2])
    _, out, _ = _status(capsys, monkeypatch, agent, _payload(agent, transcript))
    assert _line_figures(out) == complete
    with open(transcript, "ab") as handle:
        handle.write(extra[len(extra) // 2:])
    _, out, _ = _status(capsys, monkeypatch, agent, _payload(agent, transcript))
    assert _line_figures(out) == _memory_figures(capsys, transcript)
    assert spy.starts[-1] == sum(len(line) for line in lines), "the torn line was saved in the index"


@pytest.mark.parametrize("recording", QWEN, ids=lambda path: path.parent.name)
def test_qwen_figures_equal_doctor_memory_after_every_line(tmp_path, capsys, monkeypatch, recording):
    """Every line a step; the history is rebuilt once, and again only where the chain branched (rewind)."""
    lines = recording.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / "project" / "session.jsonl"
    transcript.parent.mkdir()
    history = HistorySpy(monkeypatch)
    for number, line in enumerate(lines, 1):
        with open(transcript, "ab") as handle:
            handle.write(line)
        code, out, err = _status(capsys, monkeypatch, "qwen", _payload("qwen", transcript))
        assert code == 0 and err == ""
        assert _line_figures(out) == _memory_figures(capsys, transcript), f"after line {number} of {len(lines)}"
    assert history.rebuilds == 1 + _chain_breaks(lines)
    assert len(history.starts) > history.rebuilds, "no turn was read on from the last one"


def _qwen_lines(name: str) -> list[bytes]:
    return (ROOT / "tests/recordings/qwen" / name / "session.jsonl").read_bytes().splitlines(keepends=True)


def _record(line: bytes, **changes) -> bytes:
    return json.dumps({**json.loads(line), **changes}, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _answer(line: bytes, call_id: str) -> dict:
    """The tool result message of `line`, answering `call_id` instead."""
    message = json.loads(line)["message"]
    part = message["parts"][0]
    return {**message, "parts": [{**part, "functionResponse": {**part["functionResponse"], "id": call_id}}]}


def _qwen_edits() -> dict[str, tuple[list[bytes], list[bytes]]]:
    """(first lines, lines appended later) where what is appended does not just extend the chain."""
    lines = _qwen_lines("multi-turn")
    uuids = [json.loads(line)["uuid"] for line in lines]
    half = len(lines) // 2
    return {
        # A new record answering an earlier one than the last: the chain branches.
        "branch": (lines[:half], [_record(lines[half], uuid="branch-0001", parentUuid=uuids[3])]),
        # The last record (a tool result) written again under its uuid with another result: a fragment,
        # whose parts Qwen appends to it.
        "fragment": (lines[:half], [_record(lines[half - 2], uuid=uuids[half - 1], parentUuid=uuids[half - 2],
                                            message=_answer(lines[half - 2], "call_fragment"))]),
        # A record missing from the middle comes last: the gap closes, older records join the chain.
        "late parent": (lines[:10] + lines[11:half], [lines[10]]),
        # A record of another session id.
        "other session": (lines[:half], [_record(lines[half - 2], uuid="other-0001", parentUuid=uuids[half - 1],
                                                 sessionId="another-session", message=_answer(lines[half - 2], "call_other"))]),
    }


@pytest.mark.parametrize("edit", list(_qwen_edits()))
def test_qwen_rebuilds_when_the_chain_does_not_just_grow(tmp_path, capsys, monkeypatch, edit):
    first, later = _qwen_edits()[edit]
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"".join(first))
    before = _status(capsys, monkeypatch, "qwen", _payload("qwen", transcript))[1]
    history = HistorySpy(monkeypatch)
    with open(transcript, "ab") as handle:
        handle.writelines(later)
    _, out, _ = _status(capsys, monkeypatch, "qwen", _payload("qwen", transcript))
    assert _line_figures(out) == _memory_figures(capsys, transcript) and out != before
    if edit == "other session":  # that one extends the chain (Qwen refuses such a file; doctor says so)
        assert history.starts and 0 not in history.starts
    else:
        assert history.starts == [0], "not read again from the start of the chain"
    more = _qwen_lines("multi-turn")[len(first) + 1:][:8]
    parent = json.loads(later[-1])["uuid"]
    with open(transcript, "ab") as handle:  # and goes on from there
        for line in more:
            handle.write(_record(line, parentUuid=parent))
            parent = json.loads(line)["uuid"]
    _, out, _ = _status(capsys, monkeypatch, "qwen", _payload("qwen", transcript))
    assert _line_figures(out) == _memory_figures(capsys, transcript) and history.starts[-1] > 0


def test_qwen_budgets_that_changed_are_used_for_the_results_measured_before(tmp_path, capsys, monkeypatch):
    """The index keeps measured results, not the Contents: a new budget reads the history again."""
    transcript = tmp_path / "session.jsonl"
    lines = _qwen_lines("multi-turn")
    transcript.write_bytes(b"".join(lines[:-1]))
    first = _status(capsys, monkeypatch, "qwen", _payload("qwen", transcript))[1]
    assert _line_figures(first)[0] > 0 and _line_figures(first)[3] == 0
    config = tmp_path / "config.toml"
    config.write_text("[budgets]\n" + "".join(f"{tool} = 10\n" for tool in ("run_shell_command", "read_file", "glob",
                                                                             "grep_search", "write_file", "edit")))
    monkeypatch.setenv("DOCTOR_CONFIG", str(config))
    with open(transcript, "ab") as handle:
        handle.writelines(lines[-1:])
    history = HistorySpy(monkeypatch)
    _, out, _ = _status(capsys, monkeypatch, "qwen", _payload("qwen", transcript))
    assert _line_figures(out) == _memory_figures(capsys, transcript) and _line_figures(out)[3] > 0
    assert history.starts[-1] == 0 and _line_figures(out)[3] != _line_figures(first)[3]


@pytest.mark.parametrize("agent, recording", [("claude", CLAUDE[0]), ("qwen", QWEN[0])])
def test_a_truncated_or_rewritten_transcript_is_read_again(tmp_path, capsys, monkeypatch, agent, recording):
    lines = recording.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / recording.name
    transcript.write_bytes(b"".join(lines))
    spy = FeedSpy(monkeypatch)
    _status(capsys, monkeypatch, agent, _payload(agent, transcript))

    transcript.write_bytes(b"".join(lines[: len(lines) // 2]))  # truncated: shorter than the saved offset
    _, out, _ = _status(capsys, monkeypatch, agent, _payload(agent, transcript))
    assert spy.starts[-1] == 0 and _line_figures(out) == _memory_figures(capsys, transcript)

    # Rewritten, as long as before or longer: other lines before the saved offset, same head.
    other = (CLAUDE[1] if agent == "claude" else QWEN[1]).read_bytes()
    transcript.write_bytes(lines[0] + other + b"".join(lines))
    _, out, _ = _status(capsys, monkeypatch, agent, _payload(agent, transcript))
    assert spy.starts[-1] == 0 and _line_figures(out) == _memory_figures(capsys, transcript)

    # Rewritten in the head only: the tail digest matches, the head digest does not.
    original = b"".join(lines[: len(lines) // 2])
    transcript.write_bytes(original)
    _status(capsys, monkeypatch, agent, _payload(agent, transcript))
    changed = bytearray(original)
    changed[10] = ord("X") if changed[10] != ord("X") else ord("Y")
    transcript.write_bytes(bytes(changed) + b"".join(lines[len(lines) // 2:]))
    _, out, _ = _status(capsys, monkeypatch, agent, _payload(agent, transcript))
    assert spy.starts[-1] == 0


def test_qwen_finds_its_transcript_from_the_session_id_and_working_directory(tmp_path, capsys, monkeypatch):
    """What Qwen Code 0.24.4 gives a command status line: `session_id` and `workspace.current_dir`."""
    project = tmp_path / "work" / "my project"
    chats = tmp_path / "home" / ".qwen" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project)) / "chats"
    chats.mkdir(parents=True)
    transcript = chats / "abc-123.jsonl"
    transcript.write_bytes(QWEN[0].read_bytes())
    code, out, _ = _status(capsys, monkeypatch, "qwen", {"session_id": "abc-123", "workspace": {"current_dir": str(project)}})
    assert code == 0 and _line_figures(out) == _memory_figures(capsys, transcript)
    code, out, _ = _status(capsys, monkeypatch, "qwen", {"session_id": "not-yet", "workspace": {"current_dir": str(project)}})
    assert (code, out) == (0, "doctor: no tool results yet\n")


@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_a_transcript_created_empty_has_no_tool_results_yet(tmp_path, capsys, monkeypatch, agent):
    """Qwen Code creates the file before its first record is written: not an error on the screen."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"")
    code, out, err = _status(capsys, monkeypatch, agent, _payload(agent, transcript))
    assert (code, out, err) == (0, "doctor: no tool results yet\n", "")


@pytest.mark.parametrize("stdin", [b"{not json", b"[1, 2]", b"\xff\xfe", b'{"transcript_path": "/nonexistent/x.jsonl"}'])
def test_bad_input_never_breaks_the_status_line(capsys, monkeypatch, stdin):
    code, out, err = _status(capsys, monkeypatch, "claude", stdin)
    assert code == 0 and out.count("\n") == 1 and out.startswith("doctor: ") and "Traceback" not in out + err


def test_an_unreadable_transcript_says_so_on_stderr_only(tmp_path, capsys, monkeypatch):
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"\x00\x01 not a session\n")  # no Qwen record in it: the reader refuses it
    code, out, err = _status(capsys, monkeypatch, "qwen", _payload("qwen", transcript))
    assert (code, out) == (0, "doctor: —\n") and err.startswith("doctor statusline: ")
    assert (cache.cache_dir() / "last-error.txt").read_text().strip() in err


def test_a_broken_or_foreign_index_is_ignored(tmp_path, capsys, monkeypatch):
    transcript = tmp_path / CLAUDE[0].name
    transcript.write_bytes(CLAUDE[0].read_bytes())
    expected = _memory_figures(capsys, transcript)
    _status(capsys, monkeypatch, "claude", _payload("claude", transcript))
    index = cache.cache_dir() / cache.index_name("claude", transcript)
    assert index.stat().st_mode & 0o777 == 0o600 and index.parent.stat().st_mode & 0o777 == 0o700
    index.write_bytes(b"garbage")
    _, out, _ = _status(capsys, monkeypatch, "claude", _payload("claude", transcript))
    assert _line_figures(out) == expected
    spy = FeedSpy(monkeypatch)
    os.chmod(index, 0o666)  # another user could have written it: never read
    _status(capsys, monkeypatch, "claude", _payload("claude", transcript))
    assert spy.starts == [0]


def test_racing_status_lines_each_print_the_right_line(tmp_path, capsys):
    """Four processes on one transcript at once: each prints the figures, the index stays whole."""
    transcript = tmp_path / CLAUDE[0].name
    transcript.write_bytes(CLAUDE[0].read_bytes())
    expected = _memory_figures(capsys, transcript)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "race-cache"), "HOME": str(tmp_path / "home")}
    payload = json.dumps(_payload("claude", transcript))
    runs = [subprocess.Popen([sys.executable, "-m", "doctor", "statusline", "claude"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(4)]
    outputs = [run.communicate(payload.encode(), timeout=60) for run in runs]
    for out, err in outputs:
        assert _line_figures(out.decode()) == expected and err == b""
    leftovers = [p.name for p in (tmp_path / "race-cache" / "doctor" / "statusline").iterdir()]
    assert len(leftovers) == 1 and leftovers[0].endswith(".msgpack")
