"""What a user types in each real client's interactive app to see doctor's summary, and what shows, in tmux.

Each test installs doctor into a throwaway HOME as a user would, starts the real client interactively in
a tmux pane against the scripted model, has the model run one big shell command, then types the entry
doctor documents for that agent (README, "In each agent"). The scripted model then answers as a model
that follows the command's instruction would: it shows the text doctor handed it as it is (the fake's
`quote` step). So the screen shows doctor's summary, and the test checks it is the summary of this very
session, with the figure `doctor memory --json` gives for the transcript the client wrote.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.conftest import REQUIRE_REFERENCE
from tests.integrations.clients import CLAUDE, CODEX, CODEX_BIN, GEMINI, GEMINI_SETTINGS, QWEN, Sandbox
from tests.integrations.test_slash_real_clients import _chars, _codex_config, _sent
from tests.integrations.tmux import TMUX, Pane

pytestmark = [pytest.mark.slow]
GEMINI_MENU = r"doctor:memory +doctor memory - what this session keeps"
# the model shows doctor's text as it is: the summary, else doctor's one line
SHOW = {"quote": [["doctor memory — ", "doctor: session "], "Full report"]}


def _needs(client):
    reason = client.missing() or (None if TMUX else "tmux is not installed")
    return pytest.mark.skipif(bool(reason) and not REQUIRE_REFERENCE, reason=reason or "")


def _on_screen(screen: str) -> str:
    """The screen's text with the wrapping and the agent's margins undone enough to search figures in."""
    return re.sub(r"\s+", " ", screen)


@_needs(CODEX)
@pytest.mark.ci
def test_codex_app_shows_doctors_summary_for_dollar_doctor_memory(tmp_path):
    """Codex 0.171's app rejects `/doctor:memory` ("Unrecognized command") before any hook runs; doctor's skill
    `$doctor-memory` is sent, doctor's trusted UserPromptSubmit hook answers it, and the model shows it."""
    box = Sandbox(tmp_path)
    folder = box.root / "bin"  # `codex` on PATH, as for a user who has Codex: install --trust asks it
    folder.mkdir()
    (folder / "codex").symlink_to(CODEX_BIN)
    (box.home / ".codex").mkdir()
    (box.home / ".codex" / "config.toml").write_text(_codex_config())
    box.doctor("install", "codex", "--trust", env={"PATH": f"{folder}:{box.env()['PATH']}"})
    steps = [[{"name": "exec_command", "args": {"cmd": "seq 1 30000"}}], "All done.", SHOW]
    pane = Pane(box.root)
    with CODEX.server(box, steps) as (port, log):
        try:
            pane.start(CODEX.command(port, []), box.project, {**CODEX.environment(box, port), "TERM": "xterm-256color"})
            pane.wait_for(r"Ask Codex to do anything")
            pane.type("count to 30000 please")
            pane.wait_for(r"All done\.")
            pane.type("$doctor-memory")  # Enter picks the skill in the `$` menu, as a user does
            pane.wait_for(r"› \$doctor-memory")
            pane.keys("Enter")  # and sends it
            pane.wait_for(r"Full report \(mode 0600\)")
            screen = pane.screen()
        finally:
            pane.close()
    bodies = [json.loads(line.split("\t", 1)[1]) for line in log.with_name(log.name + ".bodies").read_text().splitlines()]
    [transcript] = (box.home / ".codex" / "sessions").rglob("rollout-*.jsonl")
    expected = json.loads(box.doctor("memory", str(transcript), "--json").stdout)
    print(screen)  # README's captured screen (pytest -s)
    shown = _on_screen(screen)
    assert "Unrecognized command" not in shown
    assert f"doctor memory — codex session {expected['source']['sessionId']}" in shown, screen
    assert _chars(shown) == _sent(expected)
    # implicit invocation is off: the skill is not listed to the model in every request, only sent when typed
    assert not any("doctor-memory" in json.dumps(body) for body in bodies[:1])


def _gemini_box(tmp_path) -> Sandbox:
    box = Sandbox(tmp_path)
    (box.home / ".gemini").mkdir()
    (box.home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS))
    box.doctor("install", "gemini")
    return box


def _slash(pane: Pane, menu: str, typed: str = "/doctor:memory") -> None:
    """Type a command as a user does, once the completion menu offers it (`menu`), Enter. Keys typed while
    the client is still busy (starting, ending a turn) can be dropped: then the menu never shows, and the
    command is typed again."""
    for _ in range(6):
        pane.type(typed, enter=False)
        try:
            pane.wait_for(menu, timeout=10)
            break
        except AssertionError:
            pane.keys("Escape", "Escape")
    pane.keys("Enter")


@_needs(GEMINI)
def test_gemini_new_session_reports_itself_not_the_folders_previous_one(tmp_path):
    """Gemini CLI tells `/doctor:memory` nothing about its session; a session of the same folder written before
    (its 30,000-line result) must not be described as this one: doctor's SessionStart hook recorded which
    session this Gemini process is in. Its first /doctor:memory: no transcript yet; after a turn: its own."""
    box = _gemini_box(tmp_path)
    before = GEMINI.run(box, ["-p", "go", "--yolo"], [
        [{"name": "run_shell_command", "args": {"command": "seq 1 30000", "description": "big"}}], "All done."])
    assert before.returncode == 0, before.stderr
    [old] = (box.home / ".gemini" / "tmp").glob("*/chats/session-*.json*")
    old_id = json.loads(box.doctor("memory", str(old), "--json").stdout)["source"]["sessionId"]
    steps = [SHOW, [{"name": "run_shell_command", "args": {"command": "seq 1 5", "description": "small"}}], "All done.",
             SHOW]
    pane = Pane(box.root)
    with GEMINI.server(box, steps) as (port, _):
        try:
            pane.start(GEMINI.command(port, ["--yolo"]), box.project, {**GEMINI.environment(box, port), "TERM": "xterm-256color"})
            pane.wait_for(r"Type your message")
            _slash(pane, GEMINI_MENU)
            # Gemini has written the new session's file by now: 0 results (or, sooner, "no transcript yet")
            first = pane.wait_for(r"doctor(?: memory — gemini session|: session) ([0-9a-f-]{36})")
            time.sleep(2)
            pane.type("count to 5 please")
            pane.wait_for(r"All done\.")
            time.sleep(2)
            _slash(pane, GEMINI_MENU)
            pane.wait_for(r"1 result, [\d,]+ chars sent")
            pane.wait_for(r"(?s)1 result, .*Full report \(mode 0600\)")
            screen = pane.screen()
        finally:
            pane.close()
    print(screen)  # README's captured screen (pytest -s)
    [new] = [path for path in (box.home / ".gemini" / "tmp").glob("*/chats/session-*.json*") if path != old]
    expected = json.loads(box.doctor("memory", str(new), "--json").stdout)
    assert first[1] == expected["source"]["sessionId"] != old_id
    shown = _on_screen(screen)
    assert shown.count(f"gemini session {expected['source']['sessionId']}") >= 1, screen
    assert _chars(shown[shown.rindex("doctor memory — "):]) == _sent(expected)
    assert expected["toolResultRetention"]["toolResultCount"] == 1 and old_id not in shown


def _typed_in(box: Sandbox, client, args: list[str], ready: str, menu: str, tool: str) -> tuple[str, str]:
    """Start `client` in tmux, have the model run one big shell command, then type /doctor:memory: (screen,
    the id in the summary's first line)."""
    # (Qwen may ask the model once more after a turn, a request with tools: the quote is offered again)
    steps = [[{"name": tool, "args": {"command": "seq 1 30000", "description": "numbers"}}], "All done.", SHOW, SHOW]
    pane = Pane(box.root)
    with client.server(box, steps) as (port, _):
        try:
            pane.start(client.command(port, args), box.project,
                       {**client.environment(box, port), "TERM": "xterm-256color"})
            pane.wait_for(ready)
            pane.type("count to 30000 please")
            pane.wait_for(r"All done\.")
            time.sleep(2)
            _slash(pane, menu)
            deadline = time.monotonic() + 120
            while not re.search(r"doctor memory — .*Full report \(mode 0600\)", _on_screen(pane.screen())):
                assert time.monotonic() < deadline, pane.screen()
                time.sleep(0.5)
            screen = pane.screen()
        finally:
            pane.close()
    print(screen)  # README's captured screen (pytest -s)
    return screen, re.search(r"doctor memory — \w+ session (\S+)", screen)[1]


@_needs(CLAUDE)
def test_claude_shows_doctors_summary_for_doctor_memory(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "claude")
    box.claude_used_before()
    screen, shown_id = _typed_in(box, CLAUDE, ["--allowedTools", "Bash"], r"❯", r"/doctor:memory +doctor memory", "Bash")
    [transcript] = (box.home / ".claude" / "projects").glob("*/*.jsonl")
    expected = json.loads(box.doctor("memory", str(transcript), "--json").stdout)
    assert shown_id == expected["source"]["sessionId"] == transcript.stem
    assert _chars(_on_screen(screen)) == _sent(expected)


@_needs(QWEN)
def test_qwen_shows_doctors_summary_for_doctor_memory(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "qwen")
    screen, shown_id = _typed_in(box, QWEN, ["--approval-mode", "yolo"], r"Type your message",
                                 r"doctor memory - what this session keeps", "run_shell_command")
    [transcript] = (box.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    expected = json.loads(box.doctor("memory", str(transcript), "--json").stdout)
    assert shown_id == expected["source"]["sessionId"] == transcript.stem
    assert _chars(_on_screen(screen)) == _sent(expected)
