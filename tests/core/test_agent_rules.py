"""Each agent's limits are read from the places that agent reads, and say where they came from."""

import json
import math

import pytest

from doctor.core.agent_rules import rules_for
from doctor.core.settings import SettingsError


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_claude_defaults_name_the_client_version(tmp_path):
    rules = rules_for("claude", project_dir=None, env={"HOME": str(tmp_path)})
    assert rules.agent_budget("Bash").chars == 30_000
    assert rules.agent_budget("Grep").chars == 20_000
    assert rules.agent_budget("Glob").chars == 50_000  # maxResultSizeChars 100,000, persisted above the 50,000 ceiling
    assert rules.agent_budget("Read").unit == "tokens" and rules.agent_budget("Read").chars == 100_000
    assert rules.agent_budget("mcp__srv__tool").value == 25_000
    assert all("Claude Code 2.1.332" in rules.agent_budget(t).detail for t in ("Bash", "Grep", "Read", "SomeNewTool"))


def test_claude_settings_and_env_block(tmp_path):
    home = tmp_path / "cfg"
    _write(home / "settings.json", {"bashOutputMaxChars": 1_000_000, "env": {"MAX_MCP_OUTPUT_TOKENS": "60000"}})
    project = tmp_path / "proj"
    _write(project / ".claude" / "settings.local.json", {"env": {"CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS": "50000"}})
    rules = rules_for("claude", project_dir=project,
                      env={"CLAUDE_CONFIG_DIR": str(home), "MAX_MCP_OUTPUT_TOKENS": "1"})
    bash = rules.agent_budget("Bash")
    assert (bash.chars, bash.source) == (128_000, "settings") and "clamped from 1,000,000" in bash.detail
    mcp = rules.agent_budget("mcp__a__b")
    # 60,000 tokens x 4 = 240,000 chars, held to the 50,000-char persistence gate MCP results meet next
    assert (mcp.value, mcp.chars, mcp.source) == (60_000, 50_000, "settings")
    assert str(home / "settings.json") in mcp.detail
    assert rules.agent_budget("Read").value == 50_000
    assert rules.result_budget("Bash").oversized_above == 128_000


def test_gemini_project_settings_win_and_zero_disables(tmp_path):
    _write(tmp_path / ".gemini" / "settings.json", {"tools": {"truncateToolOutputThreshold": 100_000}})
    project = tmp_path / "p"
    rules = rules_for("gemini", project_dir=project, env={"HOME": str(tmp_path)})
    assert rules.agent_budget("run_shell_command").chars == 100_000
    _write(project / ".gemini" / "settings.json", {"tools": {"truncateToolOutputThreshold": 0}})
    rules = rules_for("gemini", project_dir=project, env={"HOME": str(tmp_path)})
    shell = rules.agent_budget("run_shell_command")
    assert math.isinf(shell.chars) and str(project / ".gemini" / "settings.json") in shell.detail
    held = rules.agent_budget("read_file")  # Gemini cuts no read_file output: doctor holds it to the threshold
    assert not held.own and "Gemini CLI cuts none of their output; held to" in held.detail


def test_codex_policy_by_model_and_config(tmp_path):
    env = {"CODEX_HOME": str(tmp_path)}
    assert rules_for("codex", project_dir=None, env=env, model="gpt-5.5").agent_budget("exec_command").chars == 40_000
    assert rules_for("codex", project_dir=None, env=env, model="fake-model").agent_budget("x").unit == "bytes"
    _write(tmp_path / "config.toml", "tool_output_token_limit = 50000\n")
    budget = rules_for("codex", project_dir=None, env=env, model="fake-model").agent_budget("exec_command")
    assert (budget.chars, budget.source) == (200_000, "settings") and "config.toml" in budget.detail
    _write(tmp_path / "config.toml", "tool_output_token_limit = [\n")
    with pytest.raises(SettingsError, match="config.toml"):
        rules_for("codex", project_dir=None, env=env)
