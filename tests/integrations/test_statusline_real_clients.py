"""doctor's status line in the real Claude Code and Qwen Code, interactive, in a tmux pane; and its alarm.

Each test installs doctor into a throwaway HOME with `doctor install` (which writes the
statusLine / ui.statusLine setting), starts the real client interactively in tmux against the
scripted model, and reads the screen: first doctor's "no tool results yet" line (the client ran
the command before any turn), then, after a prompt that makes the model run one shell command,
doctor's line with the figures `doctor memory --json` gives for the session the client recorded.
The oversized alarm (the after-tool hook's `systemMessage`) after a shell command over Qwen's rule
for a team's budget: Qwen Code 0.24.4 gets it (its debug log says so) but does not show it.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REQUIRE_REFERENCE
from tests.integrations.clients import CLAUDE, QWEN, Sandbox
from tests.integrations.tmux import TMUX, Pane

pytestmark = [pytest.mark.slow]
LINE = (r"doctor: ([\d,]+) chars \(~([\d,]+) tok\) in 1 tool result · ([\d,]+) oversized · most: (\S+) ([\d,]+)"
        r" · (<?[\d.]+%) of the ([\d,]+)-token context")
STEPS = [[{"name": "{tool}", "args": {"command": "seq 1 2000", "description": "numbers"}}], "All done."]


def _needs(client):
    reason = client.missing() or (None if TMUX else "tmux is not installed")
    return pytest.mark.skipif(bool(reason) and not REQUIRE_REFERENCE, reason=reason or "")


def _steps(tool: str) -> list:
    return json.loads(json.dumps(STEPS).replace("{tool}", tool))


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _memory(box: Sandbox, transcript) -> tuple:
    data = json.loads(box.doctor("memory", "--json", str(transcript)).stdout)
    top, own = data["retention"]["perTool"][0], data.get("agentMeasure")
    if own is not None:  # Claude's line: what Claude sent, tokens by Claude's own estimate
        return own["sent"], own["sentTokens"], own["oversizedResultCount"], top["tool"], top["sent"]
    return (data["toolResultRetention"]["totalChars"], data["retention"]["totalTokens"],
            data["toolResultRetention"]["oversizedResultCount"], top["tool"], top["chars"])


def _window_shared(box: Sandbox, agent: str, transcript, shown: re.Match, told_by: str) -> None:
    """The client told its status line the model's context window: the line shows the share the tool results'
    tokens hold, and the summary /doctor:memory prints afterwards says the same, naming who told it."""
    tokens, window = _number(shown[2]), _number(shown[7])
    share = tokens / window
    assert shown[6] == ("<0.1%" if 0 < share < 0.0005 else f"{share:.1%}")
    summary = box.doctor("slash", agent, "--transcript", str(transcript)).stdout
    assert f"Tool results hold {shown[6]} of the model's {window:,}-token context window ({told_by}" in summary


def _shown(match: re.Match) -> tuple:
    return _number(match[1]), _number(match[2]), _number(match[3]), match[4], _number(match[5])


def _drive(box: Sandbox, client, args: list[str], steps: list, ready: str, env: dict | None = None) -> re.Match:
    pane = Pane(box.root)
    with client.server(box, steps) as (port, _):
        try:
            pane.start(client.command(port, args), box.project,
                       {**client.environment(box, port), "TERM": "xterm-256color", **(env or {})})
            pane.wait_for(ready)
            pane.wait_for(r"doctor: no tool results yet")
            pane.type("count to 2000 please")
            return pane.wait_for(LINE)
        finally:
            pane.close()


@_needs(CLAUDE)
@pytest.mark.ci
def test_claude_shows_doctors_status_line(tmp_path):
    box = Sandbox(tmp_path)
    assert "statusLine" in (box.doctor("install", "claude").stdout + (box.home / ".claude/settings.json").read_text())
    box.claude_used_before()
    shown = _drive(box, CLAUDE, ["--allowedTools", "Bash"], _steps("Bash"), r"❯")
    [transcript] = (box.home / ".claude" / "projects").glob("*/*.jsonl")
    assert _shown(shown) == _memory(box, transcript) and shown[4] == "Bash"
    _window_shared(box, "claude", transcript, shown, "Claude Code's status line")


@_needs(QWEN)
def test_qwen_shows_doctors_status_line(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "qwen")
    # Qwen states a window only for a model it knows one of: the scripted model's comes from the settings
    settings = box.home / ".qwen" / "settings.json"
    data = json.loads(settings.read_text())
    data.setdefault("model", {}).setdefault("generationConfig", {})["contextWindowSize"] = 131_072
    settings.write_text(json.dumps(data))
    shown = _drive(box, QWEN, ["--approval-mode", "yolo"], _steps("run_shell_command"), r"Type your message")
    [transcript] = (box.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    assert _shown(shown) == _memory(box, transcript) and shown[4] == "run_shell_command"
    _window_shared(box, "qwen", transcript, shown, "Qwen Code's status line")


@_needs(QWEN)
def test_qwen_gets_the_oversized_alarm_but_does_not_show_it(tmp_path):
    """A team's budget in doctor's config (run_shell_command: 1,000 chars) makes `seq 1 2000` oversized by
    Qwen's rule (over 2 × 1,000 + 500). doctor's hook answers with its systemMessage, and Qwen Code 0.24.4
    receives it (`--debug` logs "Hook system message: …") but shows no after-tool systemMessage on its
    interactive screen: a Qwen user learns of it from the status line's oversized count, and the model
    from `--tell-model`."""
    box = Sandbox(tmp_path)
    box.doctor("install", "qwen")
    config = box.home / ".config" / "doctor" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[budgets]\nrun_shell_command = 1000\n")
    pane = Pane(box.root)
    with QWEN.server(box, _steps("run_shell_command")) as (port, _):
        try:
            pane.start(QWEN.command(port, ["--approval-mode", "yolo", "--debug"]), box.project,
                       {**QWEN.environment(box, port), "TERM": "xterm-256color"})
            pane.wait_for(r"Type your message")
            pane.type("count to 2000 please")
            pane.wait_for(r"All done\.")
            pane.wait_for(r"in 1 tool result · 1 oversized · most: run_shell_command")  # the status line counts it
            screen = pane.screen()
        finally:
            pane.close()
    [transcript] = (box.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    data = json.loads(box.doctor("memory", "--json", str(transcript)).stdout)
    [row] = [r for r in data["retention"]["oversized"] if r["tool"] == "run_shell_command"]
    logs = "".join(log.read_text() for log in (box.home / ".qwen" / "debug").glob("*.txt"))
    told = re.search(r"Hook system message: (doctor: run_shell_command returned ([\d,]+) chars, over 2× its 1,000-char "
                     r"budget \+ 500[^\n]*)", logs)
    assert told is not None and _number(told[2]) == row["rawChars"]
    assert "doctor: run_shell_command returned" not in screen, screen
