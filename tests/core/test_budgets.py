"""Budgets resolve as Qwen 0.24.4's registry does, and say where they came from."""

import math

import pytest

from doctor.core.budgets import BudgetRegistry, QwenLimits, parse_tool_budget_overrides
from doctor.core.settings import SettingsError, load_qwen_settings


def registry(**tools) -> BudgetRegistry:
    return BudgetRegistry(limits=QwenLimits.from_settings(tools))


def test_defaults_match_the_bundle():
    budgets = registry()
    assert budgets.result_budget("run_shell_command").chars == 30000
    assert budgets.result_budget("grep_search").chars == 20000
    assert budgets.result_budget("search_file_content").chars == 20000  # legacy alias
    assert budgets.result_budget("agent").chars == 32000
    assert budgets.result_budget("task").chars == 32000
    assert budgets.result_budget("web_search").chars == 102000
    assert math.isinf(budgets.result_budget("read_file").chars)
    glob = budgets.result_budget("glob")
    assert (glob.chars, glob.source) == (25000, "threshold")
    # Registered only with tools.listDirectory.enabled, so the threshold applies.
    assert budgets.registered_budget("list_directory") is None


def test_shell_follows_an_explicit_threshold():
    assert registry(truncateToolOutputThreshold=10000).result_budget("run_shell_command").chars == 10000
    disabled = registry(truncateToolOutputThreshold=-1)
    assert math.isinf(disabled.result_budget("run_shell_command").chars)
    assert math.isinf(disabled.threshold.chars)


def test_mcp_tools_need_a_configured_server():
    plain = BudgetRegistry()
    assert plain.result_budget("mcp__db__query").source == "threshold"
    configured = BudgetRegistry(mcp_servers=frozenset({"db"}))
    assert configured.result_budget("mcp__db__query").chars == 500000
    assert configured.display_budget("query (db MCP Server)").chars == 500000


def test_display_names_resolve_like_the_ui_scan():
    budgets = BudgetRegistry()
    assert budgets.display_budget("Shell").chars == 30000
    assert budgets.display_budget("SearchFiles").chars == 20000  # ToolDisplayNamesMigration
    assert budgets.display_budget("Glob").source == "threshold"  # display name found, no budget: falls through


def test_overrides_win_and_are_labelled():
    budgets = BudgetRegistry(overrides=parse_tool_budget_overrides(["run_shell_command=1000", "Grep=inf"]))
    shell = budgets.result_budget("run_shell_command")
    assert (shell.chars, shell.source) == (1000, "override")
    assert budgets.display_budget("Shell").chars == 1000
    assert math.isinf(budgets.display_budget("Grep").chars)
    with pytest.raises(ValueError):
        parse_tool_budget_overrides(["nonsense"])


def test_settings_merge_like_qwen(tmp_path):
    user = tmp_path / "home" / "settings.json"
    user.parent.mkdir()
    user.write_text('{"tools": {"truncateToolOutputThreshold": 5000, "toolOutputBatchBudget": 1},'
                    ' // comment\n "model": {"chatCompression": {"imageTokenEstimate": 900}}}')
    project = tmp_path / "proj"
    (project / ".qwen").mkdir(parents=True)
    (project / ".qwen" / "settings.json").write_text('{"tools": {"truncateToolOutputThreshold": 7000}}')
    env = {"QWEN_HOME": str(tmp_path / "home"), "QWEN_CODE_SYSTEM_SETTINGS_PATH": str(tmp_path / "none.json")}
    settings = load_qwen_settings(project, env=env)
    assert settings.limits.threshold == 7000  # workspace over user
    assert settings.limits.batch_budget == 1  # kept from user
    assert settings.image_token_estimate({}) == 900
    assert settings.image_token_estimate({"QWEN_IMAGE_TOKEN_ESTIMATE": " 2.5 "}) == 2.5
    (project / ".qwen" / "settings.json").write_text("{not json")
    with pytest.raises(SettingsError, match="settings.json:1"):
        load_qwen_settings(project, env=env)


def test_gate_sits_3000_above_the_threshold():
    assert QwenLimits().gate_threshold == 28000
    assert math.isinf(QwenLimits.from_settings({"truncateToolOutputThreshold": 0}).gate_threshold)
