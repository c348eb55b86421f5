"""The Overview's panels built from a report: rich renderables, no widgets.

`overview_view` walks every result, so the loader's worker calls it (through
`doctor.tui.view.prepare`); the Overview widget only puts the panels on screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from doctor.report.advice import visible_chars
from doctor.report.agent_text import agent_retention_lines
from doctor.report.figures import plural
from doctor.report.model import MemoryReport, present_path
from doctor.report.qwen_text import format_tool_result_retention
from doctor.report.sections import Paragraph, Table as SectionTable, budgets_section, issue_lines
from doctor.tui import format as fmt

CHART_ROWS = 12
CHANNEL_LABEL = 36  # label column of the "Model-visible vs side-channel copies" panel
UI_SCAN_LABEL = "display text, Qwen UI-history scan"
CHANNEL_LABELS = {"ui-display": "every resultDisplay string kept"}  # side-channel kind -> label
ISSUES_SHOWN = 8  # input problems listed on the Overview; the rest are counted


@dataclass(frozen=True)
class OverviewView:
    """Every Overview panel, ready to show."""

    alarm: Text
    alarm_class: str
    issues: object | None
    offender: object
    qwen: object
    turns: object
    channels: object
    spill: object
    rules: object
    process: object | None


def overview_view(report: MemoryReport) -> OverviewView:
    """Every Overview panel for `report`, as renderables (walks all results: call it off the UI thread)."""
    analysis = report.retention
    terms = report.terms
    if analysis is None:
        alarm = Text(report.retention_unavailable or "Tool result retention unavailable")
        alarm_class = "alarm-unavailable"
    elif analysis.stats.oversized_result_count:
        count = analysis.stats.oversized_result_count
        where = f" in {terms.client}" if terms.own else ""
        alarm = Text(f" ALARM  {count} oversized tool result{'s' if count != 1 else ''} stay in context "
                     f"and tax every later turn; {terms.compact_command}{where} can reclaim space.")
        alarm_class = "alarm-on"
    else:
        alarm = Text(f" OK  no tool result above its {terms.limit_word}")
        alarm_class = "alarm-off"
    skipped = sum(issue.severity == "warning" for issue in report.issues)
    if skipped:  # the figures cover only what could be read: the banner says so, never a plain OK
        alarm.append(f"\n {plural(skipped, 'part')} of the input could not be read and "
                     f"{'was' if skipped == 1 else 'were'} skipped: the figures cover the rest (Input problems below).")
        if alarm_class == "alarm-off":
            alarm_class = "alarm-partial"
    issues = _issues(report)
    if analysis is None:
        qwen = Text("–")
    elif terms.own:
        title, *lines = agent_retention_lines(report)
        qwen = Text(title, style="bold")
        qwen.append("\n" + "\n".join(lines))
    else:
        qwen = Text(format_tool_result_retention(analysis.stats))
        qwen.append(f"\n  ≈ {fmt.num(analysis.stats.total_tokens)} tokens (chars / 4)", style="dim")
    return OverviewView(
        alarm=alarm,
        alarm_class=alarm_class,
        issues=None if issues is None else fmt.indented(issues),
        offender=_offender(report),
        qwen=fmt.indented(qwen),
        turns=_turns(report),
        channels=fmt.indented(_channels(report)),
        spill=fmt.indented(_spill(report)),
        rules=_rules(report),
        process=fmt.indented(_process_line(report.process)) if report.process is not None else None,
    )


def _issues(report: MemoryReport) -> Text | None:
    """The input problems with file and line, as the text report's "Input problems" lists them."""
    lines = issue_lines(report)
    if not lines:
        return None
    text = Text("Input problems", style="bold")
    for line in lines[:ISSUES_SHOWN]:
        text.append(f"\n  {line}", style="yellow" if line.startswith("warning") else "dim")
    if len(lines) > ISSUES_SHOWN:
        text.append(f"\n  … {len(lines) - ISSUES_SHOWN} more: doctor memory --no-tui lists them all", style="dim")
    return text


def _offender(report: MemoryReport) -> Text:
    analysis = report.retention
    if analysis is None or not analysis.results:
        return Text("No tool results in this history.")
    top = analysis.largest(1)[0]
    # One style for the whole line and a visible separator: the gap after the tool name was a
    # separate run's leading space, lost by readers that trim runs ("run_shell_command90,200").
    text = Text("Biggest result  ", style="bold")
    text.append(f"#{top.ordinal} ")
    text.append(fmt.plain(top.tool or "(no name)"))
    text.append(f" · {fmt.num(report.terms.size(top))} {report.terms.unit}, turn {top.turn}")
    if top.sentinel != "none":
        text.append(f", bounded by {report.layer_term(top.sentinel)}")
    text.append("\n")
    text.append("press b to open it · 3 for every result · 2 by tool", style="dim")
    return text


def _turns(report: MemoryReport):
    analysis = report.retention
    terms = report.terms
    title = Text(f"Where it grew: {terms.unit} sent per turn (turn n: after your n-th prompt)" if terms.own
                 else "Where it grew: retained chars added per user turn", style="bold")
    if analysis is None or not analysis.results:
        return title
    turns = analysis.chars_by_turn("sent" if terms.own else "chars")
    shown = sorted(sorted(turns, key=lambda t: -t[1])[:CHART_ROWS])
    peak = max(chars for _, chars in turns) or 1
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", style="dim")
    table.add_column(justify="right")
    table.add_column(ratio=1)
    width = 40
    for turn, chars in shown:
        table.add_row(f"turn {turn}", fmt.num(chars), Text(fmt.bar(chars / peak, width), style="cyan"))
    if len(turns) > len(shown):
        return Group(title, table, Text(f"({len(shown)} largest of {len(turns)} turns)", style="dim"))
    return Group(title, table)


def _channels(report: MemoryReport) -> Text:
    analysis = report.retention
    text = Text("Model-visible vs side-channel copies", style="bold")
    visible = visible_chars(report)
    text.append(f"\n  {'model-visible tool results':<{CHANNEL_LABEL}} {fmt.num(visible):>12} chars")
    scanned = analysis is not None and analysis.ui is not None
    if scanned:
        text.append(f"\n  {UI_SCAN_LABEL:<{CHANNEL_LABEL}} {fmt.num(analysis.ui.display_chars):>12} chars")
    kept = False
    for copy in report.side_channel:
        label = CHANNEL_LABELS.get(copy.kind, copy.kind)
        kept = kept or copy.kind == "ui-display"
        text.append(f"\n  {label:<{CHANNEL_LABEL}.{CHANNEL_LABEL}} {fmt.num(copy.chars):>12} chars ({copy.count})")
    if scanned and kept:
        text.append("\n  the scan measures the text each result shows in the UI history; the recording keeps "
                    "every resultDisplay string (a shell result's text and its output)", style="dim")
    if analysis is not None and analysis.layer_counts:
        layers = ", ".join(f"{report.layer_term(layer)}: {count}" for layer, count in analysis.layer_counts.items())
        text.append(f"\n  bounded by  {layers}", style="dim")
    return text


def _spill(report: MemoryReport) -> Text:
    text = Text("Spilled outputs", style="bold")
    audit = report.spill
    if audit is None:
        text.append("\n  not audited")
        return text
    text.append("\n  ")
    text.append(fmt.plain(audit.summary_line()))
    if not audit.ok:
        text.append("\n  problems: see each result's detail (3, then enter)", style="dim")
    return text


def _rules(report: MemoryReport):
    """Whose rules judged the results and the limits in force: the text report's "Budgets in force"."""
    section = budgets_section(report)
    title = Text(section.title, style="bold")
    parts: list = []
    for block in section.blocks:
        if isinstance(block, SectionTable):
            table = Table(box=None, padding=(0, 1), show_edge=False, header_style="dim")
            for index, column in enumerate(block.columns):
                table.add_column(column, justify="right" if index in block.numeric else "left",
                                 no_wrap=column != "detail")
            for row in block.rows:  # every cell one line but the detail, which wraps
                table.add_row(*(Text(fmt.inert(str(cell))) if column == "detail" else fmt.plain(str(cell))
                                for column, cell in zip(block.columns, row)))
            parts.append(table)
        elif isinstance(block, Paragraph):
            parts.append(Text(fmt.inert(block.text), style="dim"))
    return Group(title, Padding(Group(*parts), (0, 0, 0, 2)))


def _process_line(process) -> Text:
    text = Text("Process memory", style="bold")
    text.append(f"\n  pid {process.pid}  RSS {fmt.size(process.rss)}  threads {fmt.num(process.threads)}"
                f"  gc objects {fmt.num(getattr(process.gc, 'tracked_objects', None))}")
    text.append(f"\n  {process.analysis.recommendation}", style="dim")
    return text


def source_title(report: MemoryReport) -> Text:
    source = report.source
    where = present_path(source.path, report.path_style) if source.path else "live history"
    text = Text("doctor memory", style="bold")
    text.append(" — ")
    text.append(fmt.plain(source.agent))
    text.append(" — ")
    text.append(fmt.plain(where or ""))
    if report.forced_qwen:
        text.append(" — judged by Qwen Code's budgets (--budgets qwen)")
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text
