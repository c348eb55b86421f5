"""The status line on mutated recordings that grow in pieces: its figures are `doctor memory --json`'s.

The status line's resumed reading is a fast path, so it must agree with the exact one on the
mutation fuzzer's corpus (tests/hardening/mutations.py): a Qwen or Claude recording with flipped
bytes, cuts, duplicated, swapped or deleted lines, garbage, another session's lines spliced in.
Each case is written in pieces cut anywhere (lines torn mid-way), the status line runs after each
piece through the real entry point, resuming its index, and shows the figures of `doctor memory
--json --agent` on the file's complete lines then (a torn last line is a record still being
written: never counted), or its neutral line where that report has no analysis.

DOCTOR_FUZZ_EXAMPLES sets how many cases are drawn (default: a modest number, for CI).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from doctor import cli
from doctor.report.inert import inert_line
from tests.hardening.mutations import EDITS, NUL_TAIL_QWEN, SOURCE_IDS, Case, _deep
from tests.statusline.test_statusline import LINE

EXAMPLES = int(os.environ.get("DOCTOR_FUZZ_EXAMPLES", "40"))
AGENTS = {"qwen/": "qwen", "claude/": "claude"}
MUTATED = st.builds(Case, st.sampled_from([s for s in SOURCE_IDS if s.startswith(tuple(AGENTS))]),
                    st.lists(EDITS, min_size=1, max_size=4).map(tuple))


@contextlib.contextmanager
def _scratch():
    """A scratch folder that is also $HOME and the cache, so nothing of this machine takes part."""
    names = ("HOME", "XDG_CACHE_HOME", "DOCTOR_CONFIG", "QWEN_HOME", "CLAUDE_CONFIG_DIR")
    saved = {name: os.environ.get(name) for name in names}
    with tempfile.TemporaryDirectory(prefix="doctor-statusline-fuzz-") as scratch:
        for name in names:
            os.environ.pop(name, None)
        os.environ["HOME"], os.environ["XDG_CACHE_HOME"] = scratch, str(Path(scratch) / "cache")
        try:
            yield Path(scratch)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _run(*args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main([str(arg) for arg in args])
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


def _line_figures(out: str) -> tuple | None:
    if out == "doctor: —\n":
        return None
    match = LINE.match(out)
    assert match, out
    number = lambda text: int(text.replace(",", ""))  # noqa: E731
    return (number(match[3]), number(match[1]), number(match[2]), number(match[4]),
            match[5], number(match[6]) if match[6] else None)


def _memory_figures(agent: str, transcript: Path) -> tuple | None:
    code, out, err = _run("memory", "--json", "--agent", agent, transcript)
    assert code in (0, 2, 3) and "Traceback" not in err, err
    if code == 2:
        return None  # not a session this reader can read at all
    data = json.loads(out)
    if not data["retention"]["available"]:
        return None
    qwen, retention, own = data["toolResultRetention"], data["retention"], data.get("agentMeasure")
    top = retention["perTool"][0] if retention["perTool"] else {"tool": None, "chars": None}
    shown = None if top["tool"] is None else inert_line(top["tool"]) or "(unnamed)"  # as the line shows a name
    if own is not None:  # another agent's line shows its own measure: what the model received, its tokens
        return (qwen["toolResultCount"], own["sent"], own["sentTokens"], qwen["oversizedResultCount"],
                shown, top.get("sent"))
    return (qwen["toolResultCount"], qwen["totalChars"], retention["totalTokens"], qwen["oversizedResultCount"],
            shown, top["chars"])


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=MUTATED, cuts=st.lists(st.integers(min_value=0, max_value=2**31), min_size=3, max_size=3))
@example(case=Case("qwen/compress-fast/session.jsonl", (("dup", 20),)), cuts=[1 << 10, 1 << 14, 1 << 16])
@example(case=Case("qwen/rewind/session.jsonl", (("swap", 3, 18),)), cuts=[7, 5000, 30000])
@example(case=Case("qwen/batch-budget/session.jsonl", (("flip", 0, 0),)), cuts=[0, 0, 295])  # only a torn first line
@example(case=Case("qwen/batch-budget/session.jsonl", (("line", 0, _deep(1000, True)),)), cuts=[0, 0, 0])  # too deep to store
@example(case=NUL_TAIL_QWEN, cuts=[1 << 12, 1 << 14, 1 << 16])  # a crash's NUL bytes past the line cap
def test_the_resumed_status_line_agrees_with_doctor_memory_on_mutated_sessions(case: Case, cuts: list[int]) -> None:
    agent = next(name for prefix, name in AGENTS.items() if case.source.startswith(prefix))
    data = case.data()
    ends = sorted({cut % (len(data) + 1) for cut in cuts} | {len(data)})
    with _scratch() as scratch:
        transcript = scratch / case.relative()
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_bytes(b"")
        payload = json.dumps({"session_id": "fuzz", "transcript_path": str(transcript), "cwd": str(scratch)}).encode()
        written = 0
        for end in ends:
            with open(transcript, "ab") as handle:
                handle.write(data[written:end])
            written = end
            code, out, err = _run("statusline", agent, stdin=payload)
            assert code == 0 and "Traceback" not in out + err and out.count("\n") == 1, out + err
            complete = _complete_lines(transcript, scratch)
            if complete is None:  # nothing written yet, or only a first record still being written
                assert out == "doctor: no tool results yet\n"
                continue
            assert _line_figures(out) == _memory_figures(agent, complete), f"{case} after {end} of {len(data)} bytes"
        if case.sparse_tail:  # then a crash's run of NUL bytes, never ended by a newline: left out
            with open(transcript, "r+b") as handle:
                handle.truncate(len(data) + case.sparse_tail)
            code, out, err = _run("statusline", agent, stdin=payload)
            assert code == 0 and "Traceback" not in out + err and out.count("\n") == 1, out + err
            complete = _complete_lines(transcript, scratch)
            if complete is None:
                assert out == "doctor: no tool results yet\n"
            else:
                assert _line_figures(out) == _memory_figures(agent, complete), f"{case} with its sparse tail"


def _complete_lines(transcript: Path, scratch: Path) -> Path | None:
    """A copy of `transcript` up to its last newline, beside it under the same name (None: no complete line)."""
    data = transcript.read_bytes()
    if b"\n" not in data:
        return None
    copy = scratch / "complete" / transcript.relative_to(scratch)
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(data[: data.rindex(b"\n") + 1])
    return copy
