"""No input crashes doctor: every committed recording, mutated, through the real CLI.

Each case (see `mutations.py`) is written into a scratch folder and run through
`doctor memory --json`, `doctor memory --format text` and `doctor spill verify`
(in-process, through `doctor.cli.main`, the console script's entry point);
sets of cases laid out as agent homes go through `doctor sessions`; a file that
grows with mutated lines goes through `doctor memory --follow` in a real
subprocess. Every run must end with a documented exit code (0, 2 or 3; `spill
verify` may also say 1, "findings"), never a traceback, print JSON that parses
when it rendered, print no terminal escape, and leave every input byte for byte
as it was, with nothing written beside it.

DOCTOR_FUZZ_EXAMPLES sets how many cases each test draws (default: a modest
number, for CI); the `@example`s are committed regression cases.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from doctor import cli
from tests.hardening.mutations import CASES, DEEP_CLAUDE, DEEP_QWEN, HOSTILE_NAMES_CLAUDE, NUL_TAIL_QWEN, Case

EXAMPLES = int(os.environ.get("DOCTOR_FUZZ_EXAMPLES", "40"))
RENDERED = {0, 3}
ROOT = Path(__file__).resolve().parents[2]


def _tree(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder`: its digest and mtime, to prove nothing was changed or written."""
    return {str(path.relative_to(folder)): (_digest(path), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _digest(path: Path) -> str:
    with open(path, "rb") as handle:  # streamed: a case may end in a sparse run of hundreds of MiB
        return hashlib.file_digest(handle, "sha256").hexdigest()


@contextlib.contextmanager
def _scratch_home():
    """A scratch folder that is also $HOME, so no settings or sessions of this machine take part."""
    with tempfile.TemporaryDirectory(prefix="doctor-fuzz-") as scratch:
        saved = os.environ.get("HOME")
        os.environ["HOME"] = scratch
        try:
            yield Path(scratch)
        finally:
            if saved is None:
                os.environ.pop("HOME", None)
            else:
                os.environ["HOME"] = saved


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(arg) for arg in args])
        except SystemExit as exit_:  # argparse's own exits
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def _check(code: int, out: str, err: str, allowed: set[int], what: str) -> None:
    assert code in allowed, f"{what}: exit {code}\n{err[-3000:]}"
    assert "Traceback" not in err and "Traceback" not in out, f"{what}: traceback\n{err[-3000:]}"
    assert "\x1b" not in out and "\x1b" not in err, f"{what}: a terminal escape reached the output"
    if code == 2:
        assert err.strip(), f"{what}: exit 2 without a message"


def _written(scratch: Path, case: Case) -> Path:
    target = scratch / case.relative()
    target.parent.mkdir(parents=True, exist_ok=True)
    return case.write(target)


@settings(max_examples=EXAMPLES)
@given(case=CASES)
@example(case=DEEP_QWEN)
@example(case=DEEP_CLAUDE)
@example(case=NUL_TAIL_QWEN)
@example(case=HOSTILE_NAMES_CLAUDE)
def test_a_mutated_session_never_crashes_the_cli(case: Case) -> None:
    with _scratch_home() as scratch:
        session = _written(scratch, case)
        before = _tree(scratch)
        code, out, err = _run("memory", session, "--json")
        _check(code, out, err, {0, 2, 3}, f"memory --json on {case}")
        if code in RENDERED:
            report = json.loads(out)
            assert "source" in report
        if code == 3:
            assert report["issues"], "exit 3 names what was skipped"
        code, out, err = _run("memory", session, "--format", "text")
        _check(code, out, err, {0, 2, 3}, f"memory --format text on {case}")
        code, out, err = _run("spill", "verify", session)
        _check(code, out, err, {0, 1, 2, 3}, f"spill verify on {case}")
        assert _tree(scratch) == before, "the input was changed or something was written beside it"


def test_the_deep_nesting_regression_is_an_invalid_line_with_exit_3() -> None:
    """The committed case that once ended in a RecursionError traceback and exit 1."""
    with _scratch_home() as scratch:
        code, out, err = _run("memory", _written(scratch, DEEP_QWEN), "--json")
    assert code == 3, err
    issues = json.loads(out)["issues"]
    assert [issue["line"] for issue in issues] == [4]
    assert "nested too deeply" in issues[0]["message"]


def _home_layout(case: Case) -> Path | None:
    """Where `case`'s file lives in an agent's home, so `doctor sessions` finds it (None: no agent lists it)."""
    parts = case.relative().parts
    if "home" in parts:  # Claude, Codex and Gemini recordings are stored as the agent's home
        return Path(*parts[parts.index("home") + 1:])
    name = "-".join(parts).replace(".", "-")
    if parts[0] == "qwen":
        return Path(".qwen", "projects", "-w", "chats", f"{name}.jsonl")
    if parts[0] == "claude-code":
        return Path(".claude", "projects", "-w", f"{name}.jsonl")
    if parts[0] == "codex":
        return Path(".codex", "sessions", "2026", "01", "01", f"rollout-{name}.jsonl")
    if parts[0] == "gemini-cli":
        return Path(".gemini", "tmp", "w", "chats", f"session-{name}.json")
    return None


@settings(max_examples=max(EXAMPLES // 4, 5))
@given(cases=st.lists(CASES, min_size=1, max_size=6))
def test_doctor_sessions_on_a_home_of_mutated_sessions(cases: list[Case]) -> None:
    with _scratch_home() as scratch:
        for number, case in enumerate(cases):
            layout = _home_layout(case)
            if layout is not None:
                target = scratch / layout.parent / f"{number}-{layout.name}"
                target.parent.mkdir(parents=True, exist_ok=True)
                case.write(target)
        before = _tree(scratch)
        for args in (["sessions", "--json", "--limit", "0"], ["sessions", "--limit", "0"]):
            code, out, err = _run(*args)
            _check(code, out, err, {0, 2, 3}, f"{' '.join(args)} on {cases}")
            if code in RENDERED and "--json" in args:
                json.loads(out)
        assert _tree(scratch) == before


def _growing(path: Path, data: bytes, pieces: int) -> None:
    """Append `data` to `path` in `pieces` writes, a poll interval apart, cutting lines anywhere."""
    step = max(len(data) // pieces, 1)
    for start in range(0, len(data), step):
        with open(path, "ab") as handle:
            handle.write(data[start:start + step])
        time.sleep(0.6)


@settings(max_examples=max(EXAMPLES // 10, 3))
@given(case=CASES)
@example(case=DEEP_QWEN)
@example(case=Case("qwen/batch-budget/session.jsonl", (("filename", "\x1b[31mred"),)))  # printed its raw name
def test_follow_on_a_file_that_grows_with_mutated_lines(case: Case) -> None:
    """`doctor memory --follow --json` in its own process: JSON lines until Ctrl-C, then exit 0, no traceback."""
    with _scratch_home() as scratch:
        session = scratch / case.relative()
        session.parent.mkdir(parents=True, exist_ok=True)
        data = case.data()
        session.write_bytes(data[: len(data) // 3])
        follower = subprocess.Popen([sys.executable, "-m", "doctor", "memory", "--follow", "--json", str(session)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                    env={**os.environ, "HOME": str(scratch)})
        try:
            time.sleep(1.0)
            _growing(session, data[len(data) // 3:], 3)
            grown = _tree(scratch)
            time.sleep(0.8)
            follower.send_signal(signal.SIGINT)
            out, err = follower.communicate(timeout=30)
        finally:
            if follower.poll() is None:
                follower.kill()
        assert session.read_bytes() == data and _tree(scratch) == grown
    _check(follower.returncode, out, err, {0, 2, 3}, f"memory --follow on {case}")
    for line in out.splitlines():
        json.loads(line)
