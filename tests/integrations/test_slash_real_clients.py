"""`/doctor:memory` typed into the real clients, installed with `doctor install`, against scripted models.

Each test installs doctor into a throwaway HOME, records a session with a big tool result, then
types `/doctor:memory` with the agent's own approval rules in force (no --yolo: the permission
entry doctor installed is what lets the command run) and checks what reached the model: the
request body the scripted server received holds doctor's summary of that very session, with the
figures the agent itself reports (Qwen: its own `/doctor memory --json`).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REQUIRE_REFERENCE
from tests.integrations.clients import (CLAUDE, CODEX, DOCTOR_BIN, GEMINI, GEMINI_SETTINGS, QWEN, ROOT, Outcome,
                                        Sandbox, bodies)
from tests.integrations.tmux import TMUX, Pane

pytestmark = [pytest.mark.slow]
DOCTOR = DOCTOR_BIN / "doctor"  # what `doctor install` writes into the command files and rules


def _needs(client):
    reason = client.missing()
    return pytest.mark.skipif(bool(reason) and not REQUIRE_REFERENCE, reason=reason or "")


def _chars(summary: str) -> int:
    """The summary's size figure: Qwen's retained chars, or what another agent's model was sent (its measure)."""
    return int(re.search(r"results?, ([\d,]+) (?:chars retained|chars sent|bytes sent)", summary).group(1).replace(",", ""))


def _sent(report: dict) -> int:
    """The same figure in `doctor memory --json`: the agent's own measure when it has one, else Qwen's."""
    own = report.get("agentMeasure")
    return own["sent"] if own is not None else report["toolResultRetention"]["totalChars"]


# A user's own Qwen settings as Qwen reads them (comments stripped, then JSON.parse), with a key doctor
# merges into.
COMMENTED_QWEN_SETTINGS = """{
  // my own settings: doctor install must keep this note
  "ui": {
    "hideTips": true /* and this one */
  }
}
"""


@_needs(QWEN)
@pytest.mark.ci
@pytest.mark.parametrize("settings", [None, COMMENTED_QWEN_SETTINGS], ids=["no-settings", "commented-settings"])
def test_qwen_slash_command_reaches_the_model(tmp_path, settings):
    """Also from a settings file with comments: Qwen must read what doctor wrote into it (the permission
    entry that lets the command run, the hook, the status line) with the user's notes still there."""
    box = Sandbox(tmp_path)
    if settings:
        (box.home / ".qwen").mkdir()
        (box.home / ".qwen" / "settings.json").write_text(settings)
    assert "created" in box.doctor("install", "qwen").stdout
    if settings:
        written = (box.home / ".qwen" / "settings.json").read_text()
        assert "// my own settings: doctor install must keep this note" in written and "/* and this one */" in written
        assert '"hideTips": true' in written and "doctor statusline qwen" in written
    first = QWEN.run(box, ["-p", "go", "--yolo"], [
        [{"name": "run_shell_command", "args": {"command": "seq 1 200000", "description": "big"}},
         {"name": "run_shell_command", "args": {"command": "seq 1 100", "description": "small"}},
         {"name": "run_shell_command", "args": {"command": "seq 1 10", "description": "tiny"}}], "All done."])
    assert first.returncode == 0, first.stderr
    [transcript] = (box.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    session = transcript.stem
    own = QWEN.run(box, ["--resume", session, "-p", "/doctor memory --json"], ["unused"])
    qwen_figures = json.loads(own.stdout[own.stdout.index("{"):])["toolResultRetention"]

    typed = QWEN.run(box, ["--resume", session, "-p", "/doctor:memory --top 2"], ["Here is the summary."])

    assert typed.returncode == 0, typed.stderr
    summary = typed.text_with(f"doctor memory — qwen session {session}")
    assert summary is not None, typed.bodies[-1][:2000]
    assert _chars(summary) == qwen_figures["totalChars"]
    assert f"{qwen_figures['toolResultCount']} result" in summary
    assert "  2. " in summary and "  3. " not in summary  # --top 2 reached doctor
    full = re.search(r"Full report \(mode 0600\): (\S+)", summary).group(1)
    assert (box.home / ".cache" / "doctor" / "reports").as_posix() in full


@_needs(QWEN)
def test_qwen_permission_lets_only_the_command_files_form_run_unasked(tmp_path):
    """doctor's permission rule is the command file's form: `doctor slash qwen --transcript <a file>` still needs
    the user's approval (headless Qwen refuses it), and doctor refuses `--transcript` after `--args=`."""
    box = Sandbox(tmp_path)
    box.doctor("install", "qwen")
    other = ROOT / "tests/recordings/qwen/oversized-alarm/session.jsonl"
    other_id = json.loads((other.parent / "meta.json").read_text())["sessionId"]
    ran = QWEN.run(box, ["-p", "go"], [
        [{"name": "run_shell_command", "args": {"command": f"{DOCTOR} slash qwen --args= --transcript {other}",
                                                "description": "a"}}],
        [{"name": "run_shell_command", "args": {"command": f"{DOCTOR} slash qwen --transcript {other}",
                                                "description": "b"}}],
        "All done."])
    assert ran.returncode == 0, ran.stderr
    assert not any(other_id in body for body in ran.bodies)  # the other session was never read
    assert ran.text_with("--transcript is not taken with --args") is not None  # the allowed form ran: doctor refused
    assert ran.text_with("permission was declined") is not None  # the other one needed the user's approval


@_needs(CLAUDE)
@pytest.mark.ci
def test_claude_slash_command_reaches_the_model(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "claude", "--project")
    tools = ["--tools", "Bash,Read"]
    first = CLAUDE.run(box, ["-p", "go", "--dangerously-skip-permissions", *tools], [
        [{"name": "Bash", "input": {"command": "seq 1 30000", "description": "big"}}], "All done."])
    assert first.returncode == 0, first.stderr
    [transcript] = (box.home / ".claude" / "projects").glob("*/*.jsonl")
    session = transcript.stem
    expected = box.doctor("memory", str(transcript), "--json").stdout
    expected_chars = _sent(json.loads(expected))

    typed = CLAUDE.run(box, ["--resume", session, "-p", "/doctor:memory", *tools], ["Here is the summary."])

    assert typed.returncode == 0, typed.stderr
    summary = typed.text_with(f"doctor memory — claude session {session}")
    assert summary is not None, typed.stdout + typed.stderr
    assert _chars(summary) == expected_chars


@_needs(CLAUDE)
def test_claude_slash_arguments_reach_no_shell(tmp_path):
    """What the user types after /doctor:memory reaches doctor as words (the UserPromptExpansion hook's JSON),
    never a shell: in bypass-permissions mode a command substitution in it used to run."""
    box = Sandbox(tmp_path)
    box.doctor("install", "claude", "--project")
    tools = ["--dangerously-skip-permissions", "--tools", "Bash,Read"]
    first = CLAUDE.run(box, ["-p", "go", *tools], [
        [{"name": "Bash", "input": {"command": f"seq 1 {n}", "description": "seq"}} for n in (3000, 2000, 1000)],
        "All done."])
    assert first.returncode == 0, first.stderr
    [transcript] = (box.home / ".claude" / "projects").glob("*/*.jsonl")
    pwned = tmp_path / "PWNED"

    attacked = CLAUDE.run(box, ["--resume", transcript.stem, "-p", f"/doctor:memory --top 2 $(touch {pwned})", *tools],
                          ["Here is the summary."])
    typed = CLAUDE.run(box, ["--resume", transcript.stem, "-p", "/doctor:memory --top 2", *tools],
                       ["Here is the summary."])

    assert attacked.returncode == 0 and not pwned.exists(), attacked.stderr
    refused = attacked.text_with("doctor: unknown argument(s): $(touch")  # the words themselves, unexpanded
    assert refused is not None and "Usage: /doctor:memory" in refused, attacked.bodies[-1][:3000]
    summary = typed.text_with(f"doctor memory — claude session {transcript.stem}")
    assert summary is not None and "  2. " in summary and "  3. " not in summary, typed.bodies[-1][:3000]


@_needs(GEMINI)
def test_gemini_policy_lets_only_the_command_files_form_run_unasked(tmp_path):
    """doctor's policy rule allows `doctor slash gemini --args=<one word>` and nothing longer: a model steered
    into `doctor slash gemini --transcript <a file>` is not let through (headless Gemini refuses what needs asking)."""
    box = Sandbox(tmp_path)
    (box.home / ".gemini").mkdir()
    (box.home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS))
    box.doctor("install", "gemini")
    [other] = (ROOT / "tests/recordings/gemini/big-outputs/home/.gemini/tmp").glob("*/chats/session-*.json*")
    steered = f"{DOCTOR} slash gemini --transcript {other}"  # the doctor install wrote into the rule
    ran = GEMINI.run(box, ["-p", "go"], [
        [{"name": "run_shell_command", "args": {"command": steered, "description": "a"}}],
        [{"name": "run_shell_command", "args": {"command": f"{DOCTOR} slash gemini --args= --transcript {other}",
                                                "description": "b"}}],
        [{"name": "run_shell_command", "args": {"command": f"{DOCTOR} slash gemini --args='--top 2'",
                                                "description": "c"}}],
        "All done."])
    assert ran.returncode == 0, ran.stderr
    other_id = json.loads((ROOT / "tests/recordings/gemini/big-outputs/meta.json").read_text())["sessionId"]
    responses = [part["functionResponse"]["response"] for content in json.loads(ran.bodies[-1])["contents"]
                 for part in content["parts"] if "functionResponse" in part]
    assert [response.get("error") for response in responses[:2]] == ["Tool execution denied by policy."] * 2
    assert not any(other_id in body for body in ran.bodies)  # the other session was never read
    # the exact form ran, unasked: this very session's summary (the newest of the folder)
    assert "doctor memory — gemini session" in responses[2]["output"] and other_id not in responses[2]["output"]


@_needs(CLAUDE)
@pytest.mark.skipif(TMUX is None and not REQUIRE_REFERENCE, reason="tmux is not installed")
def test_claude_interactive_slash_command_is_answered_by_the_expansion_hook(tmp_path):
    """Typed in Claude Code's own terminal UI (tmux), `/doctor:memory --top 1` expands, the
    UserPromptExpansion hook answers, and the model receives doctor's summary of this session."""
    box = Sandbox(tmp_path)
    box.doctor("install", "claude")
    box.claude_used_before()
    steps = [[{"name": "Bash", "input": {"command": "seq 1 2000", "description": "numbers"}}], "Counted.",
             "Here is the summary."]
    pane = Pane(box.root)
    with CLAUDE.server(box, steps) as (port, log):
        try:
            pane.start(CLAUDE.command(port, ["--allowedTools", "Bash"]), box.project,
                       {**CLAUDE.environment(box, port), "TERM": "xterm-256color"})
            pane.wait_for(r"❯")
            pane.type("count to 2000 please")
            pane.wait_for(r"Counted\.")
            pane.type("/doctor:memory --top 1")
            pane.wait_for(r"Here is the summary\.")
        finally:
            pane.close()
    sent = Outcome(0, "", "", bodies(log))
    [transcript] = (box.home / ".claude" / "projects").glob("*/*.jsonl")
    summary = sent.text_with(f"doctor memory — claude session {transcript.stem}")
    assert summary is not None and "  1. Bash: " in summary and "  2. " not in summary, sent.bodies[-1][:3000]


@_needs(CLAUDE)
def test_claude_first_prompt_is_a_short_message(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "claude")
    typed = CLAUDE.run(box, ["-p", "/doctor:memory", "--tools", "Bash"], ["Nothing yet."])
    assert typed.returncode == 0, typed.stderr
    # Claude 2.1.332 writes the transcript only after the command ran: the short message, not an error
    said = typed.text_with("has no transcript yet (its first prompt)")
    assert said is not None, typed.bodies


@_needs(GEMINI)
def test_gemini_slash_command_reaches_the_model(tmp_path):
    box = Sandbox(tmp_path)
    (box.home / ".gemini").mkdir()
    # The user's settings as Gemini CLI reads them: comments stripped, then JSON.parse.
    commented = "// my own settings\n" + json.dumps(GEMINI_SETTINGS, indent=2).replace("{", "{ /* note */", 1)
    (box.home / ".gemini" / "settings.json").write_text(commented)
    box.doctor("install", "gemini")
    written = (box.home / ".gemini" / "settings.json").read_text()
    assert written.startswith("// my own settings\n{ /* note */") and "doctor hook gemini" in written
    first = GEMINI.run(box, ["-p", "go", "--yolo"], [
        [{"name": "run_shell_command", "args": {"command": "seq 1 30000", "description": "big"}}], "All done."])
    assert first.returncode == 0, first.stderr

    typed = GEMINI.run(box, ["--resume", "latest", "-p", "/doctor:memory"], ["Here is the summary."])

    assert typed.returncode == 0, typed.stderr
    summary = typed.text_with("doctor memory — gemini session")
    assert summary is not None, typed.stdout + typed.stderr
    # Gemini CLI 0.61.0 resumes with the call's response twice (a synthesized `<id>_response` message
    # beside the recorded one) and sends both to the model: the summary counts what the model holds.
    # Resuming with a SessionStart hook (doctor's records the session), Gemini CLI 0.61.0 first starts a new file
    # for the session (its opening context only), then writes on into the old one: the summary is the old one's.
    files = list((box.home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))
    transcript = max(files, key=lambda path: path.stat().st_size)
    report = json.loads(box.doctor("memory", str(transcript), "--json").stdout)
    assert f"gemini session {report['source']['sessionId']}" in summary
    expected = report["toolResultRetention"]
    assert _chars(summary) == _sent(report)
    sent = json.loads(typed.bodies[-1])["contents"]
    assert sum("functionResponse" in part for content in sent for part in content["parts"]) == expected["toolResultCount"]


def _codex_config() -> str:
    """The config the Codex recordings use (provider `fake`); the port is set per run with -c."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("codex_record", ROOT / "tests/recordings/codex/record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CONFIG % 9


@_needs(CODEX)
def test_codex_prompt_hook_answers_doctor_memory(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "codex")
    (box.home / ".codex" / "config.toml").write_text(_codex_config())
    exec_ = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    first = CODEX.run(box, [*exec_, "go"], [
        [{"name": "exec_command", "args": {"cmd": "seq 1 30000"}}], "All done."])
    assert first.returncode == 0, first.stderr
    [transcript] = (box.home / ".codex" / "sessions").rglob("rollout-*.jsonl")
    expected = json.loads(box.doctor("memory", str(transcript), "--json").stdout)

    # the hook is not trusted in this throwaway HOME: the bypass flag stands in for /hooks
    typed = CODEX.run(box, [*exec_, "--dangerously-bypass-hook-trust", "resume", "--last", "/doctor:memory"],
                      ["Here is the summary."])

    assert typed.returncode == 0, typed.stderr
    summary = typed.text_with("doctor memory — codex session")
    assert summary is not None, typed.stdout + typed.stderr
    assert _chars(summary) == _sent(expected)
    assert "Show the doctor summary above to the user as it is, then stop; do not run any tool." in summary


def _doctor_budgets(box: Sandbox, text: str) -> None:
    """doctor's own config in the sandbox HOME (`[budgets]`, as a team sets them)."""
    config = box.home / ".config" / "doctor" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(text)


def _memory_row(box: Sandbox, transcript, tool: str) -> dict:
    data = json.loads(box.doctor("memory", str(transcript), "--json", "--top", "50").stdout)
    [row] = [r for r in data["retention"]["oversized"] if r["tool"] == tool]
    return row


@_needs(CLAUDE)
@pytest.mark.parametrize("tell_model", [False, True])
def test_claude_after_tool_hook_raises_the_oversized_alarm(tmp_path, tell_model):
    box = Sandbox(tmp_path)
    box.doctor("install", "claude", *(["--tell-model"] if tell_model else []))
    # Claude bounds Bash itself (persisted above 30,000 chars) and cuts a Read to 25,000 tokens: with its own
    # limits nothing it sends is oversized. The team's doctor budget for Read (20,000 chars) is what trips here.
    _doctor_budgets(box, "[budgets]\nRead = 20000\n")
    (box.project / "notes.txt").write_text("".join(f"note {i:04d} {'n' * 40}\n" for i in range(600)))  # 30,600
    big = "python3 -c \"print('o' * 60000)\""
    ran = CLAUDE.run(box, ["-p", "go", "--dangerously-skip-permissions", "--tools", "Bash,Read",
                           "--output-format", "stream-json", "--verbose"],
                     [[{"name": "Bash", "input": {"command": big, "description": "big"}}],
                      [{"name": "Read", "input": {"file_path": str(box.project / "notes.txt")}}], "All done."])
    assert ran.returncode == 0, ran.stderr
    shown = [json.loads(line).get("content", "") for line in ran.stdout.splitlines() if '"informational"' in line]
    alarms = [text for text in shown if "doctor: " in text]  # `PostToolUse:Read says: doctor: …`
    assert len(alarms) == 1 and "doctor: Read returned " in alarms[0], shown  # the persisted Bash: silent
    [transcript] = (box.home / ".claude" / "projects").glob("*/*.jsonl")
    row = _memory_row(box, transcript, "Read")  # doctor memory afterwards: the same verdict, the same figure
    config = box.home / ".config" / "doctor" / "config.toml"  # doctor's own budget, named by its file and key
    assert f"Read returned {row['rawChars']:,} chars (≈{row['sentTokens']:,} tokens), over doctor's 20,000-char " \
           f"budget ([budgets] Read in {config})" in alarms[0]
    told = ran.text_with("The last Read result is")
    assert (told is not None) == tell_model


@_needs(CLAUDE)
def test_claude_runs_doctor_without_doctor_on_its_path(tmp_path):
    """A venv never activated where Claude Code runs: install (itself run without doctor on PATH) writes this
    doctor's absolute path, so the hook and the status line run; a bare `doctor` failed after every tool call."""
    box = Sandbox(tmp_path)
    bare = {"PATH": "/usr/bin:/bin"}
    box.doctor("install", "claude", env=bare)
    _doctor_budgets(box, "[budgets]\nRead = 20000\n")
    (box.project / "notes.txt").write_text("".join(f"note {i:04d} {'n' * 40}\n" for i in range(600)))  # 30,600
    ran = CLAUDE.run(box, ["-p", "go", "--dangerously-skip-permissions", "--tools", "Bash,Read",
                           "--output-format", "stream-json", "--verbose"],
                     [[{"name": "Read", "input": {"file_path": str(box.project / "notes.txt")}}], "All done."], env=bare)
    assert ran.returncode == 0, ran.stderr
    assert "not found" not in ran.stdout + ran.stderr and "hook failed" not in ran.stdout.lower()
    shown = [json.loads(line).get("content", "") for line in ran.stdout.splitlines() if '"informational"' in line]
    assert any("doctor: Read returned " in text for text in shown), shown


@_needs(QWEN)
def test_qwen_after_tool_hook_tells_the_model_when_opted_in(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "qwen", "--tell-model")
    settings = box.home / ".qwen" / "settings.json"  # truncation off, as in recordings/qwen/oversized-alarm
    settings.write_text(json.dumps({**json.loads(settings.read_text()),
                                    "tools": {"truncateToolOutputThreshold": -1, "toolOutputBatchBudget": -1}}))
    # The team's doctor budget for the shell (20,000 chars) is what trips here: with truncation off Qwen keeps
    # the shell's 60,000 chars whole.
    _doctor_budgets(box, "[budgets]\nrun_shell_command = 20000\n")
    grep = box.project / "grep"
    grep.mkdir()
    for f in range(20):
        (grep / f"g{f:02d}.txt").write_text("".join("needle %02d-%04d %s\n" % (f, i, "g" * 100) for i in range(200)))
    ran = QWEN.run(box, ["-p", "go", "--yolo"], [
        [{"name": "grep_search", "args": {"pattern": "needle", "path": str(grep)}}],
        [{"name": "run_shell_command", "args": {"command": "python3 -c \"print('o' * 60000)\"", "description": "big"}}],
        [{"name": "run_shell_command", "args": {"command": "seq 1 5", "description": "small"}}], "All done."])
    assert ran.returncode == 0, ran.stderr
    # The hook is handed grep's 1,000 raw matches (over 2 × 20,000 + 500), but Qwen cuts them to grep's
    # 20,000-char budget after the hook: the model gets Qwen's cut, and is told nothing about it.
    # (Qwen 0.24.4 headless shows no hook systemMessage; the model-facing sentence is what is checked.)
    assert ran.text_with("Tool output was too large and has been truncated") is not None
    assert ran.text_with("The last grep_search result") is None
    told = ran.text_with("The last run_shell_command result is")
    assert told is not None and "above twice its 20,000-char budget" in told
    [transcript] = (box.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    assert _memory_row(box, transcript, "run_shell_command")["oversized"]  # doctor memory: the same verdict
    assert ran.text_with("The last run_shell_command result is 6") is not None  # the 60,0xx-char one, not seq's


@_needs(GEMINI)
def test_gemini_after_tool_hook_raises_the_oversized_alarm(tmp_path):
    box = Sandbox(tmp_path)
    (box.home / ".gemini").mkdir()
    (box.home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS))
    box.doctor("install", "gemini", "--tell-model")
    (box.project / "big.txt").write_text("".join(f"line {i:04d} {'b' * 50}\n" for i in range(2500)))
    ran = GEMINI.run(box, ["-p", "go", "--yolo"], [
        [{"name": "run_shell_command", "args": {"command": "seq 1 30000", "description": "big"}}],
        [{"name": "read_file", "args": {"file_path": str(box.project / "big.txt")}}],
        [{"name": "run_shell_command", "args": {"command": "seq 1 5", "description": "small"}}], "All done."])
    assert ran.returncode == 0, ran.stderr
    # Headless Gemini prints a hook's systemMessage on stderr; additionalContext joins the function response.
    # The hook is handed seq's whole 168,968 chars, but Gemini cuts them to its 40,000-char threshold before
    # the model sees them: silent. read_file is not cut, and its 122,328 chars stay: the alarm.
    alarms = [line for line in ran.stderr.splitlines() if line.startswith("Hook system message: doctor: ")]
    assert len(alarms) == 1, ran.stderr
    [transcript] = (box.home / ".gemini" / "tmp").glob("*/chats/session-*.json*")
    row = _memory_row(box, transcript, "read_file")
    told = ran.text_with("<hook_context>The last read_file result is 122,328 chars")
    assert told is not None and "above the 40,000-char limit doctor holds it to" in told
    # doctor memory counts the same result afterwards, with the hook's own sentence Gemini appended to it
    assert row["rawChars"] == len(told) and told.index("\n\n<hook_context>") == 122_328
    # (its tokens are Gemini's estimate of the 122,328 chars; doctor memory's row also holds the hook's sentence)
    assert "doctor: read_file returned 122,328 chars (≈" in alarms[0]
    # Gemini cuts no read_file output: the 40,000 chars are the limit doctor holds it to, never Gemini's own
    assert "tokens), over the 40,000-char limit doctor holds it to (Gemini CLI cuts none of their output; " \
           "held to tools.truncateToolOutputThreshold" in alarms[0] and "Gemini CLI's 40,000" not in alarms[0]
    assert ran.text_with("seq 1 5") is not None and sum("<hook_context>" in body for body in ran.bodies[-1:]) == 1


@_needs(CODEX)
def test_codex_after_tool_hook_tells_the_model(tmp_path):
    box = Sandbox(tmp_path)
    box.doctor("install", "codex", "--tell-model")
    # Codex cuts a command's output to its truncation policy before the hook sees it, so with Codex's own
    # limit nothing is oversized; the team's doctor budget for exec_command (20,000 chars) is what trips here.
    (box.home / ".codex" / "config.toml").write_text("tool_output_token_limit = 50000\n" + _codex_config())
    _doctor_budgets(box, "[budgets]\nexec_command = 20000\n")
    big = "python3 -c \"print('o' * 60000)\""
    ran = CODEX.run(box, ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                          "--dangerously-bypass-hook-trust", "go"], [
        [{"name": "exec_command", "args": {"cmd": big, "max_output_tokens": 50000}}],
        [{"name": "exec_command", "args": {"cmd": "seq 1 5"}}], "All done."])
    assert ran.returncode == 0, ran.stderr
    told = ran.text_with("The last Bash result is")
    config = box.home / ".config" / "doctor" / "config.toml"  # doctor's own budget, not Codex's nor a flag's
    assert told is not None and ("above doctor's 20,000-byte budget + 1,000 bytes of Codex CLI's header "
                                 f"([budgets] exec_command in {config})") in told, ran.stderr[-2000:]
    assert sum("The last Bash result is" in body for body in ran.bodies) == 2  # in both later requests, once
    [transcript] = (box.home / ".codex" / "sessions").rglob("rollout-*.jsonl")
    assert _memory_row(box, transcript, "exec_command")["rawChars"] > 21_000  # doctor memory: oversized too
