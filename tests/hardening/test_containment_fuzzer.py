"""Hostile paths against the spill-file gate, through `doctor spill show` (the gate `doctor mcp`'s read_spilled uses).

A scratch HOME holds what an attacker finds on a machine: Qwen's and Claude's real spill files (content
`SPILL-OK`) beside the agent's own `shell_history`, `logs.json` and chat (content with `SECRET`), a spill-
shaped symlink to `logs.json`, hash folders that are symlinks (to the real one, to `/`), a clone committing
`tmp/<64 hex> -> /`, a FIFO and a folder with spill-shaped names, a spill file whose name holds a terminal
escape and Rich markup, and a private key outside every root. Hypothesis builds paths out of those names
and `..`, `.`, empty components and the scratch folder's own path (so a traversal can aim at the key).
Whatever the path: exit 0 or 2, never a traceback; a page is only ever `SPILL-OK`; `SECRET` never comes
out; a refusal is one inert line; nothing blocks (a FIFO opened would hang the run: an alarm fails it).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import signal
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from doctor import cli

EXAMPLES = int(os.environ.get("DOCTOR_FUZZ_EXAMPLES", "40")) * 3
HASH = hashlib.sha256(b"/project").hexdigest()
LINKED_HASH = hashlib.sha256(b"/linked").hexdigest()
ROOT_HASH = hashlib.sha256(b"/root").hexdigest()
SESSION_ID = "8a822aee-57e2-4015-aec8-2461b2098594"
ESCAPED = "\x1b]52;c;cGF5bG9hZA==\x07[bold red]x[@click=app.quit]_0123456789ab.output"
AGENT_VARIABLES = ("QWEN_HOME", "QWEN_RUNTIME_DIR", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "CODEX_HOME")


@contextlib.contextmanager
def _machine():
    """The scratch HOME described above, as $HOME for the in-process CLI (the agents' own variables unset)."""
    with tempfile.TemporaryDirectory(prefix="doctor-contain-") as scratch, mock.patch.dict(os.environ, {"HOME": scratch}):
        home = Path(scratch)
        qwen = home / ".qwen" / "tmp"
        (qwen / HASH / "tool-results").mkdir(parents=True)
        (qwen / HASH / "run_shell_command_0123456789ab.output").write_text("SPILL-OK\n")
        (qwen / HASH / "tool-results" / "call_1.txt").write_text("SPILL-OK\n")
        (qwen / HASH / ESCAPED).write_text("SPILL-OK\n")
        (qwen / HASH / "shell_history").write_text("SECRET history\n")
        (qwen / HASH / "logs.json").write_text('[{"message": "SECRET prompt"}]\n')
        (qwen / HASH / "tool-results" / "call_link.txt").symlink_to("../logs.json")
        os.mkfifo(qwen / HASH / "tool-results" / "call_fifo.txt")
        (qwen / HASH / "tool-results" / "call_dir.txt").mkdir()
        (qwen / LINKED_HASH).symlink_to(qwen / HASH)
        (qwen / ROOT_HASH).symlink_to("/")
        claude = home / ".claude" / "projects" / "-project"
        (claude / SESSION_ID / "tool-results").mkdir(parents=True)
        (claude / SESSION_ID / "tool-results" / "b1.txt").write_text("SPILL-OK\n")
        (claude / f"{SESSION_ID}.jsonl").write_text('{"message": "SECRET chat"}\n')
        (home / "secret").mkdir()
        (home / "secret" / "id_rsa").write_text("SECRET key\n")
        (home / "clone" / "tmp").mkdir(parents=True)
        (home / "clone" / "tmp" / HASH).symlink_to("/")
        for name in AGENT_VARIABLES:
            os.environ.pop(name, None)
        yield home


NAMES = st.sampled_from([
    ".qwen", "tmp", HASH, LINKED_HASH, ROOT_HASH, "tool-results", "call_1.txt", "call_link.txt", "call_fifo.txt",
    "call_dir.txt", "run_shell_command_0123456789ab.output", ESCAPED, "shell_history", "logs.json", ".claude",
    "projects", "-project", SESSION_ID, f"{SESSION_ID}.jsonl", "b1.txt", "secret", "id_rsa", "clone", "..", ".",
    "", "etc", "passwd", "{HOME}", "x" * 300, "a\0b"])


def _path(home: Path, start: str, names: list[str]) -> str:
    """`start` (the scratch HOME, `/`, or nothing: relative) then `names`; `{HOME}` stands for HOME's own
    components, so `<hash -> />/{HOME}/secret/id_rsa` reaches the key through a link."""
    text = "/".join(names).replace("{HOME}", str(home).lstrip("/"))
    return {"home": f"{home}/{text}", "root": f"/{text}", "relative": text}[start]


def _show(path: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["spill", "show", "--", path])  # a relative path may start with "-"
    return code, out.getvalue(), err.getvalue()


def _stalled(signum, frame):
    raise AssertionError("doctor spill show blocked (a FIFO opened?)")


@settings(max_examples=EXAMPLES)
@given(start=st.sampled_from(["home", "root", "relative"]), names=st.lists(NAMES, max_size=9))
@example(start="home", names=[".qwen", "tmp", HASH, "tool-results", "call_1.txt"])
@example(start="home", names=[".qwen", "tmp", HASH, ESCAPED])
@example(start="home", names=[".qwen", "tmp", HASH, "tool-results", "call_link.txt"])
@example(start="home", names=[".qwen", "tmp", HASH, "tool-results", "call_fifo.txt"])
@example(start="home", names=[".qwen", "tmp", LINKED_HASH, "tool-results", "call_1.txt"])
@example(start="home", names=[".qwen", "tmp", ROOT_HASH, "{HOME}", "secret", "id_rsa"])
@example(start="home", names=["clone", "tmp", HASH, "{HOME}", "secret", "id_rsa"])
@example(start="home", names=[".qwen", "tmp", HASH, "tool-results", "..", "logs.json"])
@example(start="home", names=[".claude", "projects", "-project", SESSION_ID, "tool-results", "..", "..",
                              f"{SESSION_ID}.jsonl"])
def test_a_hostile_path_never_reaches_anything_but_a_spill_file(start, names):
    with _machine() as home:
        path = _path(home, start, names)
        previous = signal.signal(signal.SIGALRM, _stalled)
        signal.alarm(10)
        try:
            code, out, err = _show(path)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    assert code in (0, 2), (path, code, err)
    assert "Traceback" not in err and "SECRET" not in out + err, (path, out, err)
    if code == 0:
        assert out == "SPILL-OK\n", (path, out)
    else:
        assert out == "" and err.count("\n") == 1 and err.startswith("doctor: "), (path, err)
        assert "\x1b" not in err and "\x07" not in err and "\0" not in err, (path, err)


def test_the_spill_files_are_served_and_the_named_attacks_are_not():
    """The fuzzer's property allows both answers; here each planted shape gets the one it must."""
    served = [[".qwen", "tmp", HASH, "tool-results", "call_1.txt"], [".qwen", "tmp", HASH, ESCAPED],
              [".claude", "projects", "-project", SESSION_ID, "tool-results", "b1.txt"]]
    refused = [[".qwen", "tmp", HASH, "tool-results", "call_link.txt"], [".qwen", "tmp", HASH, "tool-results", "call_fifo.txt"],
               [".qwen", "tmp", HASH, "tool-results", "call_dir.txt"], [".qwen", "tmp", LINKED_HASH, "tool-results", "call_1.txt"],
               [".qwen", "tmp", ROOT_HASH, "{HOME}", "secret", "id_rsa"], ["clone", "tmp", HASH, "{HOME}", "secret", "id_rsa"],
               [".qwen", "tmp", HASH, "shell_history"], [".qwen", "tmp", HASH, "tool-results", "..", "logs.json"]]
    with _machine() as home:
        assert [_show(_path(home, "home", names))[0] for names in served] == [0] * len(served)
        assert [_show(_path(home, "home", names))[0] for names in refused] == [2] * len(refused)
