"""`read_spilled` called by each real client through its own MCP configuration, against the scripted model.

The client runs a shell command whose output is too long for its context and spills it where it always
does (Claude Code 2.1.332: `<session id>/tool-results/`; Qwen Code 0.24.4: `tmp/<project hash>/
<tool>_<hex>.output`; Gemini CLI 0.61.0: `tool-outputs/session-<id>/`); the scripted model then pages
that file through doctor's `read_spilled` tool, by the name the client gives it, with `doctor mcp`
registered the way README says (`qwen|gemini|codex mcp add …`, Claude `--mcp-config`). Codex writes no
spill files of its own: its model pages a Qwen spill file of the same user (the recorded one). The
answer that reaches the model must hold exactly the lines `doctor spill show` prints for the same
offset and limit: the containment of issue 22 keeps every legitimate spill file served.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess

import pytest

from tests.conftest import REQUIRE_REFERENCE
from tests.integrations.clients import CLAUDE, CODEX, GEMINI, GEMINI_SETTINGS, QWEN, ROOT, Client, Sandbox

pytestmark = [pytest.mark.slow]

PAGE = {"offset": 1000, "limit": 3}


def _needs(client: Client):
    reason = client.missing()
    return pytest.mark.skipif(bool(reason) and not REQUIRE_REFERENCE, reason=reason or "")


def _add_doctor(client: Client, box: Sandbox, *args: str) -> None:
    """`<client> mcp add …`, the client's own command, as README tells the user."""
    binary = ["node", str(client.binary)] if client.binary.suffix == ".js" else [str(client.binary)]
    done = subprocess.run([*binary, "mcp", "add", *args], cwd=box.project, env=client.environment(box, 0), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def _expected_page(box: Sandbox, spilled) -> str:
    page = box.doctor("spill", "show", str(spilled), "--offset", str(PAGE["offset"]), "--limit",
                      str(PAGE["limit"])).stdout.rstrip("\n")
    assert len(page.split("\n")) == PAGE["limit"]
    return page


def _served(answer: str, page: str) -> bool:
    """The page, as the client handed the tool's answer on: plain text, or the `{"result": …}` of a structured
    answer (Claude and Codex pass that JSON; Qwen passes both), after Codex's `Output:` header."""
    if page in answer:
        return True
    body = answer.split("Output:\n", 1)[-1]
    try:
        decoded = json.loads(body)
    except ValueError:
        return False
    return isinstance(decoded, dict) and decoded.get("result") == page


def _answers(body: dict) -> list[str]:
    """Every tool answer's text in a request body (Anthropic, OpenAI chat, Gemini or Responses)."""
    texts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "tool":
            texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block["content"]
                texts.append(inner if isinstance(inner, str) else "".join(p.get("text", "") for p in inner))
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            if "functionResponse" in part:
                response = part["functionResponse"]["response"]
                output = response.get("output") if isinstance(response, dict) else None
                texts.append(output if isinstance(output, str) else json.dumps(response))
    for item in body.get("input", []) if isinstance(body.get("input"), list) else ():
        if item.get("type") == "function_call_output":
            output = item["output"]
            if isinstance(output, list):  # Codex: its header and the tool's text content, as input_text items
                output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
            texts.append(output if isinstance(output, str) else json.dumps(output))
    return texts


def _assert_served(ran, page: str) -> None:
    assert ran.returncode == 0, ran.stderr[-2000:]
    answers = _answers(json.loads(ran.bodies[-1]))
    assert any(_served(answer, page) for answer in answers), answers[-1][:2000] if answers else ran.bodies[-1][:2000]
    # as text, and only it: not also (Qwen) or only (Claude) as the SDK's JSON-escaped `{"result": …}` copy
    # (after Codex's `Output:` header; Gemini wraps an MCP answer in <untrusted_context>)
    bodies = [answer.split("Output:", 1)[-1].removeprefix("<untrusted_context>").removesuffix("</untrusted_context>")
              for answer in answers]
    assert sum(body.strip("\n") == page for body in bodies) == 1
    assert not any('{"result"' in answer for answer in answers)


@_needs(CLAUDE)
def test_claude_pages_a_spilled_output_through_doctor_mcp(tmp_path):
    box = Sandbox(tmp_path)
    config = box.root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"doctor": {"command": "doctor", "args": ["mcp"]}}}))
    steps = [[{"name": "Bash", "input": {"command": "seq 1 20000", "description": "many lines"}}],
             [{"name": "mcp__doctor__read_spilled", "input": {"path": "{{SPILL}}", **PAGE}}],
             "All done."]
    ran = CLAUDE.run(box, ["-p", "go", "--dangerously-skip-permissions", "--mcp-config", str(config),
                           "--strict-mcp-config"], steps)
    [spilled] = (box.home / ".claude" / "projects").glob("*/*/tool-results/*.txt")
    page = _expected_page(box, spilled)
    assert page == "1001\n1002\n1003"  # seq's lines 1001-1003 are at zero-based offset 1000
    call = next(block for message in json.loads(ran.bodies[-1])["messages"] if message["role"] == "assistant"
                for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_use"
                and block["name"] == "mcp__doctor__read_spilled")
    assert call["input"]["path"] == str(spilled)  # the stub named the file; the model paged that one
    _assert_served(ran, page)


@_needs(QWEN)
@pytest.mark.ci
def test_qwen_pages_its_truncated_output_through_doctor_mcp(tmp_path):
    """Qwen defers MCP tools: the model reaches `mcp__doctor__read_spilled` through Qwen's `tool_call`."""
    box = Sandbox(tmp_path)
    _add_doctor(QWEN, box, "doctor", "doctor", "mcp")
    ran = QWEN.run(box, ["-p", "go", "--yolo"], [
        [{"name": "run_shell_command", "args": {"command": "seq 1 200000", "description": "big"}}],
        [{"name": "tool_call", "args": {"name": "mcp__doctor__read_spilled",
                                        "arguments": {"path": "{{SPILL}}", **PAGE}}}],
        "All done."])
    [spilled] = (box.home / ".qwen" / "tmp").glob("*/run_shell_command_*.output")
    _assert_served(ran, _expected_page(box, spilled))


@_needs(GEMINI)
def test_gemini_pages_its_truncated_output_through_doctor_mcp(tmp_path):
    box = Sandbox(tmp_path)
    (box.home / ".gemini").mkdir()
    (box.home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS))
    _add_doctor(GEMINI, box, "--scope", "user", "doctor", "doctor", "mcp")
    ran = GEMINI.run(box, ["-p", "go", "--yolo"], [
        [{"name": "run_shell_command", "args": {"command": "seq 1 30000", "description": "big"}}],
        [{"name": "mcp_doctor_read_spilled", "args": {"path": "{{SPILL}}", **PAGE}}],
        "All done."])
    [spilled] = (box.home / ".gemini" / "tmp").glob("*/tool-outputs/session-*/*.txt")
    _assert_served(ran, _expected_page(box, spilled))


@_needs(CODEX)
def test_codex_pages_a_spill_file_of_the_same_user_through_doctor_mcp(tmp_path):
    """Codex waits for an MCP server only when it is `required` (else a fast model answers before doctor's
    tools are listed); it puts them in a `mcp__doctor` namespace of the Responses API."""
    from tests.integrations.test_slash_real_clients import _codex_config

    box = Sandbox(tmp_path)
    (box.home / ".codex").mkdir()
    (box.home / ".codex" / "config.toml").write_text(_codex_config())
    _add_doctor(CODEX, box, "doctor", "--", "doctor", "mcp")
    config = box.home / ".codex" / "config.toml"
    config.write_text(config.read_text().replace('args = ["mcp"]\n', 'args = ["mcp"]\nrequired = true\n'))
    recorded = ROOT / "tests" / "recordings" / "qwen" / "shell-truncation" / "tmp" / "run_shell_command_0d154cefc199.output"
    spilled = box.home / ".qwen" / "tmp" / hashlib.sha256(str(box.project).encode()).hexdigest() / recorded.name
    spilled.parent.mkdir(parents=True)
    shutil.copyfile(recorded, spilled)
    ran = CODEX.run(box, ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "go"], [
        [{"name": "read_spilled", "namespace": "mcp__doctor", "args": {"path": str(spilled), **PAGE}}],
        "All done."])
    _assert_served(ran, _expected_page(box, spilled))


def _results_counted(answer: str) -> int:
    return int(re.search(r"(\d+) results?, [\d,]+ chars (?:sent|retained)", answer).group(1))


@_needs(CLAUDE)
def test_claude_memory_report_counts_every_result_the_model_was_given(tmp_path):
    """Claude Code writes its transcript a moment after it hands the model a result; doctor mcp waits (bounded)
    for the asking call to be in the file, so each answer counts every result given before that call."""
    box = Sandbox(tmp_path)
    config = box.root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"doctor": {"command": "doctor", "args": ["mcp"]}}}))
    ran = CLAUDE.run(box, ["-p", "go", "--dangerously-skip-permissions", "--mcp-config", str(config),
                           "--strict-mcp-config"], [
        [{"name": "Bash", "input": {"command": "seq 1 30000", "description": "many lines"}}],
        [{"name": "mcp__doctor__memory_report", "input": {}}],
        [{"name": "Bash", "input": {"command": "seq 1 20", "description": "few"}}],
        [{"name": "mcp__doctor__largest_results", "input": {}}],
        [{"name": "mcp__doctor__memory_report", "input": {}}],
        "All done."])
    assert ran.returncode == 0, ran.stderr[-2000:]
    answers = _answers(json.loads(ran.bodies[-1]))
    first, last = [a for a in answers if a.startswith("doctor memory — claude session")]
    [largest] = [a for a in answers if a.startswith("{") and '"results"' in a]
    assert _results_counted(first) == 1 and _results_counted(last) == 4  # the results given before each call
    assert len(json.loads(largest)["results"]) == 3
    assert "\n" in first and not first.startswith("{")  # text, as the model should read it


@_needs(QWEN)
def test_qwen_memory_report_reaches_the_model_once_without_the_call_in_progress(tmp_path):
    box = Sandbox(tmp_path)
    _add_doctor(QWEN, box, "doctor", "doctor", "mcp")
    ran = QWEN.run(box, ["-p", "go", "--yolo"], [
        [{"name": "run_shell_command", "args": {"command": "seq 1 3000", "description": "big"}}],
        [{"name": "tool_call", "args": {"name": "mcp__doctor__memory_report", "arguments": {}}}],
        "All done."])
    assert ran.returncode == 0, ran.stderr[-2000:]
    [answer] = [a for a in _answers(json.loads(ran.bodies[-1])) if "doctor memory — qwen session" in a]
    assert answer.count("doctor memory — qwen session") == 1 and not answer.startswith("{")
    [transcript] = (box.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    rows = json.loads(box.doctor("memory", str(transcript), "--json").stdout)["retention"]["largest"]
    [shell] = [row for row in rows if row["tool"] == "run_shell_command"]
    # the MCP call itself was running: not a result yet (Qwen answers an unanswered call only on resume)
    assert f"1 result, {shell['chars']:,} chars retained" in answer and "tool_call" not in answer
