"""Turn a history (a session read from disk, or a live host's list) into a MemoryReport.

The one place where settings, command-line overrides and the analysis meet, so
the CLI, the slash command, the TUI and the status line all report the same numbers.
The report model is imported where a report is built: `doctor statusline` needs only
`session_analysis`, after every turn.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field

from doctor.core.agent_measure import AgentMeasure, measure_for
from doctor.core.agent_rules import rules_for
from doctor.core.context_window import from_session_meta
from doctor.core.agent_rules.model import AgentRules
from doctor.core.analysis import RetentionAnalysis, analyze_tool_result_retention
from doctor.core.budgets import BudgetRegistry, QwenLimits, ToolSpec
from doctor.core.retention import RetentionUnavailable
from doctor.core.settings import QwenSettings, deep_merge, load_qwen_settings
from doctor.sources.base import LoadedSession
from doctor.sources.jsonl import count_records

if TYPE_CHECKING:
    from doctor.report.model import MemoryReport


class ReportOptions(Struct, frozen=True):
    """What the user asked for on the command line (or the host passed to attach)."""

    settings_files: tuple[Path, ...] = ()
    use_default_settings_files: bool = True
    settings: Mapping | None = None  # Qwen-shaped settings given directly (live hosts)
    threshold: float | None = None  # --threshold, as Qwen's setting would hold it (≤ 0 disables)
    tool_budgets: Mapping[str, float] = field(default_factory=dict)
    host_tools: tuple[ToolSpec, ...] = ()
    top: int = 10
    path_style: str = "short"
    env: Mapping[str, str] | None = None
    budgets: str = "agent"  # "agent": each agent's own rules; "qwen": Qwen Code's yardstick for any session


class SettingsInfo(Struct, frozen=True):
    """The settings in force, as the report shows them (`MemoryReport.settings`)."""

    threshold: float
    threshold_explicit: bool
    shell_budget: float
    batch_budget: float
    line_cap: float
    image_token_estimate: float
    files: tuple[str, ...] = ()
    overrides: tuple[tuple[str, float], ...] = ()


class ResolvedSettings(Struct, frozen=True):
    """Budgets and the image estimate in force, and the settings summary the report shows."""

    budgets: BudgetRegistry | AgentRules
    image_token_estimate: float
    info: SettingsInfo
    rules: AgentRules | None = None  # the agent's own rules, when they (not Qwen's) judge the session


def qwen_settings_for(options: ReportOptions, project_dir: Path | None) -> QwenSettings:
    """Qwen's settings files merged as Qwen merges them, then `--settings` files and a host's own settings."""
    env = os.environ if options.env is None else options.env
    if options.use_default_settings_files:
        settings = load_qwen_settings(project_dir, extra_files=options.settings_files, env=env)
    else:
        settings = load_qwen_settings(files=list(options.settings_files), env=env)
    if options.settings:
        settings = QwenSettings(merged=deep_merge(settings.merged, options.settings), files=settings.files)
    return settings


def resolve_settings(options: ReportOptions, project_dir: Path | None) -> ResolvedSettings:
    env = os.environ if options.env is None else options.env
    settings = qwen_settings_for(options, project_dir)
    tools = dict(settings.tools)
    if options.threshold is not None:
        tools["truncateToolOutputThreshold"] = options.threshold
    limits = QwenLimits.from_settings(tools)
    budgets = BudgetRegistry(
        limits=limits,
        mcp_servers=settings.mcp_server_names,
        overrides=dict(options.tool_budgets),
        host_tools=options.host_tools,
    )
    estimate = settings.image_token_estimate(env)
    info = SettingsInfo(
        threshold=limits.threshold,
        threshold_explicit=limits.threshold_explicit,
        shell_budget=limits.shell_budget,
        batch_budget=limits.batch_budget,
        line_cap=limits.line_cap,
        image_token_estimate=estimate,
        files=tuple(str(f) for f in settings.files),
        overrides=tuple(sorted(options.tool_budgets.items())),
    )
    return ResolvedSettings(budgets, estimate, info)


def analyse(
    history: Iterable, ui_history: Iterable | None, resolved: ResolvedSettings, *, turns_marked: bool = False,
    measure: AgentMeasure | None = None,
) -> tuple[RetentionAnalysis | None, str | None]:
    """The analysis, or None and the reason where Qwen's analyzer would throw (`turns_marked`:
    the reader marked the typed prompts, `doctor.core.turns`; `measure`: the agent's own measure,
    taken beside Qwen's figures)."""
    try:
        analysis = analyze_tool_result_retention(
            history,
            ui_history=ui_history,
            budgets=resolved.budgets,
            image_token_estimate=resolved.image_token_estimate,
            turns_marked=turns_marked,
            measure=measure,
        )
    except RetentionUnavailable as exc:
        return None, f"Tool result retention diagnostics unavailable: {exc}"
    return analysis, None


def agent_rules(session: LoadedSession, options: ReportOptions) -> AgentRules | None:
    """The session's agent's own rules, unless `--budgets qwen` asked for Qwen's yardstick."""
    if options.budgets == "qwen":
        return None
    project = session.meta.get("cwd") or session.project_dir
    return rules_for(session.agent, project_dir=Path(project) if project else None,
                     env=os.environ if options.env is None else options.env, model=session.meta.get("model"),
                     extra_files=options.settings_files, overrides=options.tool_budgets,
                     use_default_files=options.use_default_settings_files, threshold=options.threshold)


def session_settings(session: LoadedSession, options: ReportOptions) -> ResolvedSettings:
    """The settings that judge the session: its agent's rules unless `--budgets qwen`."""
    resolved = resolve_settings(options, session.project_dir)
    rules = agent_rules(session, options)
    if rules is not None:
        resolved = ResolvedSettings(rules, resolved.image_token_estimate, resolved.info, rules)
    return resolved


def session_analysis(session: LoadedSession, options: ReportOptions, history: Iterable | None = None,
                     ui_history: Iterable | None = None, *, measure_ui: bool = True,
                     ) -> tuple[ResolvedSettings, RetentionAnalysis | None, str | None]:
    """The settings that judge the session, the analysis, and why it is unavailable when it is:
    what `report_for_session` puts in the report. `history`, `ui_history`: Contents and UI items to
    measure instead of the session's own (`doctor whatif` measures the session replayed under other limits).
    `measure_ui=False`: the UI history is not read at all (the analysis then has none, `ui` None): for
    `doctor scan`, which stores no UI figure, and for which reading it was a tenth of the reader's work."""
    resolved = session_settings(session, options)
    history = session.history_to_measure() if history is None else history
    if not measure_ui:
        ui_history = None
    elif ui_history is None:
        ui_history = session.ui_history_to_measure()
    analysis, unavailable = analyse(history, ui_history, resolved,
                                    turns_marked=session.turns_marked, measure=measure_for(session.agent))
    return resolved, analysis, unavailable


def report_for_session(session: LoadedSession, options: ReportOptions, *, spill=None, process=None,
                       history: Iterable | None = None, ui_history: Iterable | None = None,
                       measure_ui: bool = True) -> MemoryReport:
    """What `doctor memory` reports of a session (`measure_ui`: see `session_analysis`)."""
    from doctor.report.model import MemoryReport, SourceInfo

    resolved, analysis, unavailable = session_analysis(session, options, history, ui_history, measure_ui=measure_ui)
    return MemoryReport(
        source=SourceInfo(
            kind="file",
            agent=session.agent,
            path=str(session.path) if session.path else None,
            session_id=session.session_id,
            format=session.format,
            started=session.started,
        ),
        retention=analysis,
        retention_unavailable=unavailable,
        settings=resolved.info,
        issues=tuple(session.issues),
        side_channel=tuple(session.side_channel.values()),
        spill=spill,
        process=process,
        rules=resolved.rules,
        yardstick="qwen" if options.budgets == "qwen" else session.agent,
        context_window=from_session_meta(session.agent, session.meta),
        top=options.top,
        path_style=options.path_style,
    )


def report_with_spill_audit(session: LoadedSession, options: ReportOptions, *, spill_roots=(), process=None) -> MemoryReport:
    """The report of a session read from disk, its spill files audited (`spill_roots`: where copied ones live)."""
    return with_spill_audit(session, report_for_session(session, options, process=process), spill_roots)


def with_spill_audit(session: LoadedSession, report: MemoryReport, spill_roots=()) -> MemoryReport:
    """`report` with the session's spill files audited: a second step, so that a screen can show
    the retention figures before it (the audit rereads the recording for pointers)."""
    from dataclasses import replace

    from doctor.spill.audit import audit_spill
    from doctor.spill.pointers import pointers_for
    from doctor.spill.resolve import SpillLocator

    locator = SpillLocator(session.path, spill_roots=list(spill_roots), session_roots=session.spill_roots)
    return replace(report, spill=audit_spill(session, pointers_for(session, report.retention), locator))


def scan_facts(session: LoadedSession) -> dict:
    """What `doctor scan` records about a session beyond the report: agent version, project hash
    (never the path), file size and records. `doctor memory --json --results` adds them to the source.

    The project is the working directory the transcript records when it records one (Claude's `cwd`),
    not the folder holding the file: the same session copied into an archive or an inbox must hash
    the same."""
    from doctor.report.paths import project_hash

    version = session.meta.get("client_version")
    gemini_hash = session.meta.get("projectHash")
    recorded = session.meta.get("cwd")
    project = recorded if isinstance(recorded, str) and recorded else session.project_dir
    path = session.path
    return {
        "agentVersion": version if isinstance(version, str) else None,
        "projectHash": project_hash(project) or (gemini_hash[:16] if isinstance(gemini_hash, str) else None),
        "sizeBytes": os.path.getsize(path) if path is not None else None,
        "records": count_records(path) if path is not None else None,
    }
