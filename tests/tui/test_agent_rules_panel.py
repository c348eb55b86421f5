"""Pilot: the TUI says whose rules judged the session and lists that agent's limits with their sources."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from doctor.assemble import ReportOptions, report_for_session
from doctor.sources.registry import open_session
from doctor.tui.app import DoctorApp
from doctor.tui.provider import StaticProvider
from doctor.tui.widgets.tables import ResultsTable, ToolsTable

from tests.tui.test_journeys import SIZE, loaded, run_async, text_of

RAISED = Path(__file__).resolve().parents[1] / "recordings" / "claude" / "raised-limits"


def app_for(**options) -> DoctorApp:
    """The TUI on Claude's raised-limits recording, reading the settings file the client read."""
    session = open_session(next((RAISED / "home").rglob("*.jsonl")))
    report = report_for_session(session, ReportOptions(env={"HOME": str(RAISED / "home")}, **options))
    return DoctorApp(StaticProvider(replace(report, spill=None), session=session), keymap={})


def cells(table, column: int) -> list[str]:
    return [str(table.get_row(row.key)[column]) for row in table.ordered_rows]


@run_async
async def test_overview_names_claudes_rules_with_each_limits_source():
    async with app_for().run_test(size=(200, 60)) as pilot:
        screen = await loaded(pilot)
        panel = text_of(screen.query_one("#rules"))
        assert "Budgets in force (Claude Code 2.1.332's own rules)" in panel
        settings = str(RAISED / "home" / ".claude" / "settings.json")
        bash = next(line for line in panel.splitlines() if line.strip().startswith("Bash "))
        assert bash.split()[1:5] == ["128,000", "chars", "128,000", "settings"] and "bashOutputMaxChars" in bash
        read = next(line for line in panel.splitlines() if line.strip().startswith("Read "))
        assert read.split()[1:5] == ["60,000", "tokens", "240,000", "settings"]
        assert "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS" in read
        assert settings.rsplit("/", 1)[0].split("/")[-1] in panel  # the file is named
        assert "truncateToolOutputThreshold" not in panel
        await pilot.press("3")
        layers = cells(screen.query_one(ResultsTable), 7)
        assert "persisted to tool-results/" in layers  # the MCP result, in Claude's words
        await pilot.press("2")
        assert any("persisted to tool-results/ 1" in cell for cell in cells(screen.query_one(ToolsTable), 8))


@run_async
async def test_budgets_qwen_is_named_in_the_title_and_the_panel():
    async with app_for(budgets="qwen").run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert "Budgets in force (Qwen Code 0.24.4's rules, --budgets qwen)" in text_of(screen.query_one("#rules"))
        assert "judged by Qwen Code's budgets (--budgets qwen)" in text_of(screen.query_one("#title"))


@run_async
async def test_doctors_own_budget_is_listed_with_its_config_file_beside_claudes_limit(tmp_path):
    """A team's `[budgets] Bash` (doctor's config, read by doctor's own loader) is doctor's, not Claude's."""
    from doctor.config import load_budget_overrides

    config = tmp_path / "config.toml"
    config.write_text("[budgets]\nBash = 10000\n")
    async with app_for(tool_budgets=load_budget_overrides(config)).run_test(size=(200, 60)) as pilot:
        screen = await loaded(pilot)
        panel = " ".join(text_of(screen.query_one("#rules")).split())
        assert (f"Bash 10,000 chars 10,000 override [budgets] Bash in {config}: doctor's own budget, in place of "
                "Claude Code's 128,000 chars for it") in panel
        assert "--tool-budget" not in panel
