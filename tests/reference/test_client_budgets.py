"""doctor's per-agent limit tables equal what the installed clients' own code says.

Each figure in doctor.core.agent_rules.{claude,gemini,codex} is extracted again
here from the client package (Claude Code's embedded JavaScript, Gemini CLI's
bundle, the model catalog inside the Codex binary), by the code around it
rather than by minified names alone.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from doctor.core.agent_rules import claude, codex, gemini
from tests.reference.client_packages import (
    CLAUDE_BIN,
    CLIENTS,
    CODEX_BIN,
    binary,
    gemini_core_source,
    package_version,
)


@pytest.fixture(scope="module")
def claude_js() -> str:
    return binary(CLAUDE_BIN).decode("latin-1")


def _js_number(text: str) -> float:
    return math.inf if text == "1/0" else float(text)


def _var(js: str, name: str) -> float:
    for at in _finds(js, name + "="):
        match = re.match(r"[,; ]%s=([0-9e.]+)[,;]" % re.escape(name), js[at - 1:at + len(name) + 20])
        if match:
            return float(match.group(1))
    raise AssertionError(f"no numeric {name}= in the Claude bundle")


def _finds(js: str, needle: str):
    """Every index of `needle` (str.find: far faster than a regex over the 400 MB bundle)."""
    at = js.find(needle)
    while at >= 0:
        yield at
        at = js.find(needle, at + 1)


def _tool_max_result(js: str, tool: str) -> str:
    """`maxResultSizeChars` of the tool object whose `name:` is the variable holding `tool`."""
    found = set()
    for at in _finds(js, '="%s"' % tool):
        var = re.search(r"[,; {]([A-Za-z0-9_$]{1,6})$", js[at - 8:at])
        if var is None:
            continue
        for obj in _finds(js, "name:%s," % var.group(1)):
            declared = re.search(r"maxResultSizeChars(?::([^,]+)|\(\)\{return ([^}]+)\})", js[obj:obj + 1500])
            if declared:
                found.add(declared.group(1) or declared.group(2))
    assert len(found) == 1, f"{tool}: maxResultSizeChars {found or 'not found'}"
    return found.pop()


def test_claude_version():
    assert package_version(CLIENTS / "@anthropic-ai" / "claude-code-linux-x64") == claude.VERSION


def test_claude_persistence_threshold_and_preview(claude_js):
    threshold_fn = re.search(r"function \w+\(e,n,r=(\w+),o=!1\)\{if\(!Number\.isFinite\(n\)\)return n;"
                             r"if\(o\)return Math\.min\(n,r\);.{0,140}return Math\.min\(n,r\)\}var [\w$]+=(\d+),", claude_js)
    assert threshold_fn, "the persistence threshold function changed"
    assert _var(claude_js, threshold_fn.group(1)) == claude.PERSISTENCE_CEILING
    assert int(threshold_fn.group(2)) == claude.PREVIEW_BYTES


def test_claude_bash_limits(claude_js):
    inline = re.search(r"var (\w+)=(\d+),(\w+)=(\d+);function \w+\(\)\{return (\w+)\(\w+\(\)\.bashOutputMaxChars\)\?\?\3\}",
                       claude_js)
    assert inline, "the Bash inline limit changed shape"
    assert int(inline.group(4)) == claude.BASH_DEFAULT
    assert int(inline.group(2)) == claude.BASH_READ_BACK_CAP
    clamp = re.search(r"function %s\(e\)\{if\(e===void 0\)return;return Math\.min\(Math\.max\(e,(\w+)\),(\w+)\)\}"
                      % re.escape(inline.group(5)), claude_js)
    assert clamp
    assert (_var(claude_js, clamp.group(1)), _var(claude_js, clamp.group(2))) == claude.BASH_CLAMP
    assert _tool_max_result(claude_js, "Bash") == "eut()"


def test_claude_per_tool_limits(claude_js):
    for tool, declared in claude.MAX_RESULT_SIZE_CHARS.items():
        value = _tool_max_result(claude_js, tool)
        if re.fullmatch(r"[0-9e.]+|1/0", value):
            assert _js_number(value) == declared, tool
        else:  # a named constant: its value in the bundle
            assert _var(claude_js, value) == declared, tool


def test_claude_mcp_and_read_tokens(claude_js):
    at = claude_js.index(".MAX_MCP_OUTPUT_TOKENS;if(e!==void 0&&e>0)return e;")
    mcp = re.search(r"(\w)=(\d+);function (\w)\(\)\{let e=\w$", claude_js[at - 60:at])
    assert mcp and int(mcp.group(2)) == claude.MCP_MAX_TOKENS
    chars_cap = "(){return %s()*" % mcp.group(3)
    assert claude_js[claude_js.index(chars_cap, at) + len(chars_cap)] == str(claude.MCP_CHARS_PER_TOKEN)
    at = claude_js.index("defaultFileReadingLimits??={maxSizeBytes:")
    read = re.match(r"defaultFileReadingLimits\?\?=\{maxSizeBytes:(\w+),maxTokens:\w+\(\)\?\?(\w+)\}", claude_js[at:at + 120])
    assert read
    assert (_var(claude_js, read.group(1)), _var(claude_js, read.group(2))) == (claude.READ_MAX_BYTES, claude.READ_MAX_TOKENS)


def test_claude_mcp_template_meets_the_persistence_gate(claude_js):
    """Every MCP tool is made from the template `isMcp:!0, …, name:"mcp"`: its maxResultSizeChars sets the
    gate a result under MAX_MCP_OUTPUT_TOKENS still meets (tests/recordings/claude/raised-limits shows it)."""
    at = claude_js.index('isMcp:!0,registryToolId:')
    template = re.match(r'isMcp:!0,registryToolId:\w+,isOpenWorld\(\)\{return!1\},name:"mcp",[^;]*?'
                        r'maxResultSizeChars:([0-9e.]+),', claude_js[at:at + 400])
    assert template and float(template.group(1)) == claude.MCP_MAX_RESULT_SIZE_CHARS


def test_gemini_limits():
    assert package_version(CLIENTS / "@google" / "gemini-cli") == gemini.VERSION
    core = gemini_core_source()

    def constant(name: str) -> float:
        return float(re.search(r"var %s = ([0-9e.]+);" % name, core).group(1))

    assert constant("DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD") == gemini.TRUNCATE_THRESHOLD
    assert constant("DEFAULT_TOOL_PROTECTION_THRESHOLD") == gemini.MASKING_PROTECTION_TOKENS
    assert constant("DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD") == gemini.MASKING_MIN_PRUNABLE_TOKENS
    assert 'var SHELL_TOOL_NAME = "%s";' % gemini.SHELL_TOOL in core
    # Only shell output (and a one-text MCP result) goes through the threshold; no line limit any more.
    assert 'if (typeof content === "string" && toolName === SHELL_TOOL_NAME) {' in core
    assert "call.tool instanceof DiscoveredMCPTool" in core
    assert "truncateToolOutputLines" not in core


def test_codex_catalog_truncation_policy():
    assert package_version(CLIENTS / "@openai" / "codex-linux-x64").startswith(codex.VERSION)
    data = binary(CODEX_BIN)
    assert b"tool_output_token_limit" in data
    start = data.index(b"{\n  \"models\": [")
    catalog, _ = json.JSONDecoder().raw_decode(data[start:start + 4_000_000].decode("utf-8", "replace"))
    policies = {model["slug"]: model["truncation_policy"] for model in catalog["models"]}
    assert set(policies) == codex.CATALOG_MODELS
    assert all(p == {"mode": "tokens", "limit": codex.CATALOG_TOKEN_LIMIT} for p in policies.values()), policies
