"""`read_spilled` called by a real client through its own MCP configuration, against the scripted model.

Claude Code 2.1.332 runs a Bash command whose output is too long for its context (it persists the
whole output under the session's `tool-results/` and hands the model a stub naming the file); the
scripted model then calls doctor's `read_spilled` tool on that file (Claude names it
`mcp__doctor__read_spilled`), with `doctor mcp` registered by `--mcp-config`. The request that
follows must carry exactly the lines `doctor spill show` prints for the same offset and limit.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import REQUIRE_REFERENCE
from tests.integrations.clients import CLAUDE, Sandbox

pytestmark = [pytest.mark.slow]


@pytest.mark.skipif(bool(CLAUDE.missing()) and not REQUIRE_REFERENCE, reason=CLAUDE.missing() or "")
def test_claude_pages_a_spilled_output_through_doctor_mcp(tmp_path):
    box = Sandbox(tmp_path)
    config = box.root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"doctor": {"command": "doctor", "args": ["mcp"]}}}))
    steps = [[{"name": "Bash", "input": {"command": "seq 1 20000", "description": "many lines"}}],
             [{"name": "mcp__doctor__read_spilled", "input": {"path": "{{SPILL}}", "offset": 1000, "limit": 3}}],
             "All done."]
    ran = CLAUDE.run(box, ["-p", "go", "--dangerously-skip-permissions", "--mcp-config", str(config),
                           "--strict-mcp-config"], steps)
    assert ran.returncode == 0, ran.stderr
    [spilled] = (box.home / ".claude" / "projects").glob("*/*/tool-results/*.txt")
    page = box.doctor("spill", "show", str(spilled), "--offset", "1000", "--limit", "3").stdout.rstrip("\n")
    assert page == "1001\n1002\n1003"  # seq's lines 1001-1003 are at zero-based offset 1000
    call, answer = _call_and_result(json.loads(ran.bodies[-1]), "mcp__doctor__read_spilled")
    assert call["input"]["path"] == str(spilled)  # the stub named the file; the model paged that one
    assert answer == page


def _call_and_result(body: dict, tool: str) -> tuple[dict, str]:
    """The model's call of `tool` in the last request, and the text of the tool_result answering it."""
    calls = {block["id"]: block for message in body["messages"] if message["role"] == "assistant"
             for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_use"}
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            call = calls.get(block.get("tool_use_id")) if isinstance(block, dict) else None
            if call is None or call["name"] != tool:
                continue
            content = block["content"]
            text = content if isinstance(content, str) else "".join(
                part.get("text", "") for part in content if isinstance(part, dict))
            try:  # a tool with structured output: Claude passes its JSON, {"result": TEXT}
                decoded = json.loads(text)
            except ValueError:
                return call, text
            return call, decoded["result"] if isinstance(decoded, dict) and "result" in decoded else text
    raise AssertionError(f"no {tool} result in the last request")
