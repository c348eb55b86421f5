"""The report laid out once, as sections of neutral blocks that each format renders its own way.

Text, Markdown and HTML show the same figures in the same order; building the
rows here (numbers formatted, paths presented, untrusted strings made inert)
leaves each renderer a few lines per block type and no logic of its own.
Payload text appears only in the previews section, and only when asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from doctor.core.budgets import override_origin
from doctor.report.advice import advise, interpretation, visible_chars
from doctor.report.agent_text import agent_retention_lines
from doctor.report.audit_summary import (
    AUDIT_CATEGORIES,
    category_counts,
    presented_audit_json,
)
from doctor.report.figures import figure, plural, ratio_text
from doctor.report.inert import inert_line
from doctor.report.model import QWEN_CLIENT, QWEN_VERSION, MemoryReport
from doctor.report.paths import present_path
from doctor.report.process_lines import process_lines
from doctor.report.qwen_text import format_tool_result_retention

# Findings listed one by one in the human formats; the JSON has them all.
FINDINGS_SHOWN = 20
# The heading Markdown and HTML give Qwen's block (the text report prints the block alone).
QWEN_SECTION_TITLE = "Tool result retention (Qwen Code's lines)"
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


@dataclass(frozen=True)
class Verbatim:
    """Preformatted lines shown exactly (Qwen's section, process lines, previews)."""

    lines: tuple[str, ...]
    caption: str = ""


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: frozenset[int] = frozenset()  # indexes of right-aligned columns


@dataclass(frozen=True)
class Paragraph:
    """Prose; names in `backticks` are code spans that Markdown and HTML show as code."""

    text: str

    def pieces(self) -> list[tuple[str, bool]]:
        """(text, is_code) runs, so a renderer escapes prose and code each its own way."""
        runs = _CODE_SPAN.split(self.text)
        return [(run[1:-1], True) if index % 2 else (run, False) for index, run in enumerate(runs) if run]


@dataclass(frozen=True)
class Section:
    title: str | None  # None: the block carries its own heading (Qwen's lines)
    blocks: tuple


def heading(report: MemoryReport) -> str:
    source = report.source
    where = present_path(source.path, report.path_style) if source.path else "live history"
    session = f" (session {source.session_id})" if source.session_id else ""
    yardstick = " — judged by Qwen Code's budgets (--budgets qwen)" if report.forced_qwen else ""
    return inert_line(f"doctor memory — {source.agent} — {where}{session}{yardstick}")


def _retention(report: MemoryReport) -> Section:
    if report.retention is None:
        reason = report.retention_unavailable or "Tool result retention diagnostics unavailable"
        title = f"Tool results in {report.terms.client}'s context" if report.terms.own else "Tool result retention"
        return Section(title, (Paragraph(inert_line(reason)),))
    if report.terms.own:
        title, *lines = agent_retention_lines(report)
        return Section(title, (Verbatim(tuple(line.removeprefix("  ") for line in lines)),))
    return Section(None, (Verbatim(tuple(format_tool_result_retention(report.retention.stats).split("\n"))),))


def _layers(report: MemoryReport, by_layer) -> str:
    return ", ".join(f"{report.layer_term(layer)} {count}" for layer, count in by_layer)


def _per_tool(report: MemoryReport) -> Section | None:
    summaries = report.retention.per_tool() if report.retention else []
    if not summaries:
        return None
    terms = report.terms
    rows = tuple(
        (inert_line(s.tool or "(no name)"), figure(s.count), figure(terms.size(s)), figure(terms.tokens(s)),
         figure(terms.largest(s)), figure(s.oversized), figure(s.errors), figure(s.budget.chars),
         inert_line(s.budget.detail or s.budget.source), _layers(report, s.by_layer))
        + ((figure(s.chars),) if terms.own else ())
        for s in summaries
    )
    word = terms.limit_word
    columns = ("tool", "results", terms.unit, "tokens", "largest", "oversized", "errors", word, f"{word} from",
               "bounded by") + (("Qwen est. chars",) if terms.own else ())
    numeric = frozenset(range(1, 8)) | (frozenset({10}) if terms.own else frozenset())
    title = (f"By tool (what {terms.client} sent, in {terms.unit}; tokens by {terms.estimate}; "
             f"Qwen Code's estimator beside)" if terms.own else "By tool (chars as Qwen estimates them, tokens ≈ chars ÷ 4)")
    return Section(title, (Table(columns, rows, numeric),))


def _spill_status(report: MemoryReport) -> dict[int, str]:
    """Audit problems by result ordinal, e.g. {3: "missing"}."""
    if report.spill is None:
        return {}
    status: dict[int, list[str]] = {}
    for finding in report.spill.findings:
        if finding.pointer is not None and finding.pointer.ordinal is not None and finding.severity != "info":
            status.setdefault(finding.pointer.ordinal, []).append(finding.kind)
    return {ordinal: ", ".join(kinds) for ordinal, kinds in status.items()}


def _pointer(row: dict, problems: str | None) -> str:
    pointer = row["pointer"]
    if pointer is None:
        return ""
    where = pointer["paths"][0] if pointer["paths"] else (pointer["note"] or "(no file)")
    return inert_line(where + (f" [{problems}]" if problems else ""))


def _ratio(row: dict) -> str:
    return "" if row["budgetRatio"] is None else f"{ratio_text(row['budgetRatio'])}×"


def _largest(report: MemoryReport) -> Section | None:
    if report.retention is None or not report.retention.results:
        return None
    status = _spill_status(report)
    terms = report.terms
    rows = []
    for result in report.retention.largest(report.top):
        row = report.result_json(result)
        rows.append((f"#{result.ordinal}", figure(result.turn), inert_line(result.tool or "(no name)"),
                     figure(terms.size(result)), figure(terms.tokens(result)), _ratio(row),
                     "yes" if result.oversized else "", inert_line(report.layer_term(result.sentinel)),
                     _pointer(row, status.get(result.ordinal))))
    columns = ("result", "turn", "tool", terms.unit, "tokens", f"× {terms.limit_word}", "oversized", "bounded by",
               "pointer")
    shown = len(rows)
    return Section(f"Largest {plural(shown, 'result')}", (Table(columns, tuple(rows), frozenset({1, 3, 4, 5})),))


def _previews(report: MemoryReport, previews: dict | None) -> Section | None:
    if previews is None or report.retention is None:
        return None
    blocks: list = [Paragraph("Payload text, obvious secrets masked (best effort): read it before sharing.")]
    for result in report.retention.largest(report.top):
        preview = previews.get(result.ordinal)
        if preview is None:
            continue
        caption = inert_line(f"#{result.ordinal} {result.tool} ({figure(report.terms.size(result))} {report.terms.unit})")
        lines = preview.text.split("\n") + (["…"] if preview.truncated else [])
        blocks.append(Verbatim(tuple(lines), caption))
    if len(blocks) == 1:
        blocks.append(Paragraph("No preview could be read back from the session."))
    return Section("Previews", tuple(blocks))


def _side_channel(report: MemoryReport) -> Section | None:
    stats = report.qwen_stats
    if not report.side_channel and stats is None:
        return None
    rows = [(inert_line(copy.kind), figure(copy.count), figure(copy.chars)) for copy in report.side_channel]
    if stats is not None:
        rows.append(("model-visible tool results", figure(stats.tool_result_count), figure(visible_chars(report))))
    note = Paragraph("Copies are what the session file keeps besides the model's context "
                     "(UI displays, toolUseResult, progress records): they cost disk and memory, not tokens.")
    return Section("Copies outside the model's context", (Table(("copy", "count", "chars"), tuple(rows),
                                                                frozenset({1, 2})), note))


def _spill(report: MemoryReport) -> Section | None:
    if report.spill is None:
        return None
    audit = report.spill
    data = presented_audit_json(audit.to_json(), report.path_style)
    counts = category_counts(audit)
    categories = tuple((category, figure(counts[category]), ", ".join(kinds))
                       for category, kinds in AUDIT_CATEGORIES.items())
    blocks: list = [Paragraph(inert_line(audit.summary_line())),
                    Table(("problem", "count", "finding kinds"), categories, frozenset({1}))]
    findings = data["findings"]
    if findings:
        rows = tuple((f["severity"], f["kind"], inert_line(f["path"] or ""), inert_line(f["message"]))
                     for f in findings[:FINDINGS_SHOWN])
        blocks.append(Table(("severity", "kind", "file", "detail"), rows))
        if len(findings) > FINDINGS_SHOWN:
            blocks.append(Paragraph(f"{len(findings) - FINDINGS_SHOWN} more finding(s) in the JSON report (--json)."))
    return Section("Spill files", tuple(blocks))


def _agent_budgets(report: MemoryReport) -> Section:
    """The agent's own limits, in its own terms, each with its source."""
    rules = report.rules
    data = rules.to_json()
    rows = tuple((inert_line(row.get("tools") or row.get("name")), figure(row["value"]), row["unit"],
                  figure(row["chars"]), row["source"],
                  inert_line(row["detail"] + (f" ({row['conversion']})" if row["conversion"] else "")))
                 for row in (*data["tools"], *data["settings"]))
    # doctor's own budgets (its config file or --tool-budget) replace the agent's limit for their tool
    rows += tuple((inert_line(name), figure(value), rules.unit, figure(value), "override",
                   inert_line(f"{override_origin(value, name)}: doctor's own budget, in place of "
                              f"{_agent_limit(rules, name)} for it"))
                  for name, value in sorted(rules.overrides.items()))
    files = [inert_line(present_path(f, report.path_style)) for f in rules.files]
    note = (f"{rules.rule} Settings read from {', '.join(files)}." if files else f"{rules.rule} No settings file read.")
    return Section(f"Budgets in force ({rules.client} {rules.version}'s own rules)",
                   (Table(("tools", "limit", "unit", rules.unit, "source", "detail"), rows, frozenset({1, 3})),
                    Paragraph(inert_line(note))))


def _agent_limit(rules, name: str) -> str:
    """`Claude Code's 30,000 chars`, or `no limit of Gemini CLI's` for a tool the agent never cuts."""
    budget = rules.rule_for(name).budget
    return f"{rules.client}'s {figure(budget.value)} {budget.unit}" if budget.own else f"no limit of {rules.client}'s"


def budgets_section(report: MemoryReport) -> Section:
    """Whose rules judged the results and every limit in force with its source (the TUI shows it too)."""
    if report.rules is not None:
        return _agent_budgets(report)
    s = report.settings
    origin = "set" if s.threshold_explicit else "default"
    parts = [f"threshold {figure(s.threshold)} ({origin})", f"shell {figure(s.shell_budget)}",
             f"batch {figure(s.batch_budget)}", f"line cap {figure(s.line_cap)}",
             f"image estimate {figure(s.image_token_estimate)} tokens"]
    parts += [f"{inert_line(name)} {figure(value)} (doctor's own: {inert_line(override_origin(value, name))})"
              for name, value in s.overrides]
    files = [inert_line(present_path(f, report.path_style)) for f in s.files]
    text = "; ".join(parts) + (f". Settings read from {', '.join(files)}." if files else ". No settings file read.")
    forced = ", --budgets qwen" if report.forced_qwen else ""
    return Section(f"Budgets in force ({QWEN_CLIENT} {QWEN_VERSION}'s rules{forced})", (Paragraph(text),))


def _process(report: MemoryReport) -> Section | None:
    if report.process is None:
        return None
    return Section("Process", (Verbatim(tuple(inert_line(line) for line in process_lines(report.process))),))


def issue_lines(report: MemoryReport) -> list[str]:
    """`severity: file:line: message` for each input problem, paths as --paths asks (the TUI lists them too)."""
    lines = []
    for issue in report.issues:
        where = present_path(issue.path, report.path_style)
        location = f"{where}:{issue.line}" if issue.line is not None else where
        lines.append(inert_line(f"{issue.severity}: {location}: {issue.message}"))
    return lines


def _issues(report: MemoryReport) -> Section | None:
    if not report.issues:
        return None
    return Section("Input problems", (Verbatim(tuple(issue_lines(report))),))


def build_sections(report: MemoryReport, previews: dict | None = None) -> list[Section]:
    """Every section in report order; `previews` (by ordinal) only with --include-previews."""
    sections = [
        _retention(report),
        _per_tool(report),
        _largest(report),
        _previews(report, previews),
        _side_channel(report),
        _spill(report),
        budgets_section(report),
        _process(report),
        _issues(report),
        Section("Interpretation", (Paragraph(inert_line(interpretation(advise(report)))),)),
    ]
    return [section for section in sections if section is not None]
