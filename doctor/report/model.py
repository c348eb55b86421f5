"""The report model: one object every renderer (text, JSON, Markdown, HTML, TUI) reads.

`MemoryReport.to_dict()` is the object `doctor memory --json` prints (and
`to_json()` that text), also from `doctor.attach(history).report()`: Qwen's `toolResultRetention`
object verbatim, doctor's additions beside it, a `schemaVersion`, stable key
order. It carries sizes, counts, names and pointers, never payload text.
This module imports neither rich nor textual.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from doctor import __version__
from doctor.core.agent_measure import AgentMeasure, measure_for
from doctor.core.analysis import RetentionAnalysis, ToolSummary
from doctor.core.context_window import ContextWindow
from doctor.core.budgets import Budget, override_origin
from doctor.core.retention import ResultMeasure, whole_number
from doctor.report.paths import PATH_STYLES, present_path  # noqa: F401  (PATH_STYLES: public here too)
from doctor.report.terms import Terms, terms_of

if TYPE_CHECKING:
    from doctor.assemble import SettingsInfo
    from doctor.report.json_text import JsonText

SCHEMA_VERSION = 1
# The reference whose budgets judge Qwen sessions, dumps, live hosts, and any session under --budgets qwen.
QWEN_CLIENT, QWEN_VERSION = "Qwen Code", "0.24.4"
# Agents judged by their own rules unless --budgets qwen (doctor.core.agent_rules).
AGENTS_WITH_RULES = frozenset({"claude", "gemini", "codex"})
DEFAULT_TOP = 10


def _number(value: float | None) -> float | int | None:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return whole_number(value)


def budget_json(budget: Budget) -> dict:
    return {"chars": budget.as_json_number(), "source": budget.source, "detail": budget.detail}


@dataclass(frozen=True)
class SourceInfo:
    """Where the history came from."""

    kind: str  # "file" | "live"
    agent: str
    path: str | None = None
    session_id: str | None = None
    format: str = ""
    started: str | None = None


@dataclass(frozen=True)
class MemoryReport:
    """Everything `doctor memory` shows, ready to render."""

    source: SourceInfo
    retention: RetentionAnalysis | None
    settings: SettingsInfo
    retention_unavailable: str | None = None
    issues: tuple = ()  # SourceIssue
    side_channel: tuple = ()  # SideChannelCopy
    spill: object | None = None  # spill audit summary, with .to_json()
    process: object | None = None  # ProcessDiagnostics, with .to_dict()
    top: int = DEFAULT_TOP
    path_style: str = "short"
    extra: dict = field(default_factory=dict)
    rules: object | None = None  # AgentRules when the agent's own rules (not Qwen's) judged the results
    yardstick: str = "qwen"  # the agent whose rules were used; "qwen" with a non-Qwen agent = --budgets qwen
    context_window: ContextWindow | None = None  # the model's window, where the agent states it

    @property
    def forced_qwen(self) -> bool:
        """--budgets qwen on another agent's session."""
        return self.rules is None and self.source.agent in AGENTS_WITH_RULES

    def layer_term(self, layer: str) -> str:
        """The layer that bounded a result, in the words of the agent whose rules judged it."""
        return self.rules.layer_term(layer) if self.rules is not None else layer

    def rules_json(self) -> dict:
        if self.rules is not None:
            data = self.rules.to_json()
            data["files"] = [present_path(f, self.path_style) for f in data["files"]]
            return {"yardstick": self.rules.agent, "forced": False, **data}
        return {"yardstick": "qwen", "forced": self.forced_qwen, "client": QWEN_CLIENT, "clientVersion": QWEN_VERSION}
    scan_facts: dict | None = None  # --results: assemble.scan_facts, and every result's row
    source_facts: dict | None = None  # assemble.scan_facts alone (`doctor memory --json` always states them)

    @property
    def qwen_stats(self):
        return self.retention.stats if self.retention is not None else None

    @property
    def terms(self) -> Terms:
        """The words and figures of this session's agent (`doctor.report.terms`)."""
        return terms_of(self)

    def to_json(self) -> JsonText:
        """The text `doctor memory --json` prints (indexing it like a dict still works, deprecated)."""
        from doctor.report.json_text import json_text

        return json_text(self.to_dict())

    def to_dict(self) -> dict:
        """The `doctor memory --json` object (documented by schema/memory-report.schema.json)."""
        # Imported here, not above: the status line and the hooks build reports they never print.
        from doctor.report.advice import advise

        data: dict = {
            "schemaVersion": SCHEMA_VERSION,
            "generator": {"name": "doctor", "version": __version__},
            "source": self._source_json(),
        }
        if self.retention is not None:
            data["toolResultRetention"] = self.retention.stats.to_qwen_json()
        measure = measure_for(self.source.agent)
        if measure is not None:  # beside Qwen's object, never instead of it (a Qwen session has none)
            data["agentMeasure"] = self._agent_measure_json(measure)
        data["retention"] = self._retention_json()
        facts = self.scan_facts if self.scan_facts is not None else self.source_facts
        if facts is not None:
            data["source"].update(facts)
        if self.scan_facts is not None:
            if self.retention is not None:
                data["retention"]["results"] = [self.result_json(result) for result in self.retention.results]
        data["settings"] = self._settings_json() if self.rules is None else None
        data["rules"] = self.rules_json()
        data["sideChannel"] = [
            {"kind": copy.kind, "count": copy.count, "chars": copy.chars} for copy in self.side_channel
        ]
        if self.spill is not None:
            from doctor.report.audit_summary import presented_audit_json

            data["spill"] = presented_audit_json(self.spill.to_json(), self.path_style)
        if self.process is not None:
            data["process"] = self.process.to_dict()
        data["issues"] = [
            {"path": present_path(issue.path, self.path_style), "line": issue.line,
             "severity": issue.severity, "message": issue.message}
            for issue in self.issues
        ]
        data["advice"] = [item.to_json() for item in advise(self)]
        return data

    def _source_json(self) -> dict:
        source = self.source
        return {
            "kind": source.kind,
            "agent": source.agent,
            "format": source.format,
            "path": present_path(source.path, self.path_style),
            "sessionId": source.session_id,
            "started": source.started,
        }

    def _agent_measure_json(self, measure: AgentMeasure) -> dict:
        """What the model received in the agent's own measure: its unit, its token estimate, totals."""
        sent = self.retention.sent_totals() if self.retention is not None else None
        stats = self.qwen_stats
        return {
            **measure.to_json(),
            "toolResultCount": stats.tool_result_count if stats is not None else None,
            "sent": _number(sent.size) if sent is not None else None,
            "sentTokens": sent.tokens if sent is not None else None,
            "largestSent": _number(sent.largest) if sent is not None else None,
            "oversizedResultCount": stats.oversized_result_count if stats is not None else None,
            "contextWindow": None if self.context_window is None or sent is None else
            self.context_window.to_json(sent.tokens),
        }

    def _settings_json(self) -> dict:
        s = self.settings
        return {
            "truncateToolOutputThreshold": _number(s.threshold),
            "thresholdExplicit": s.threshold_explicit,
            "shellBudget": _number(s.shell_budget),
            "toolOutputBatchBudget": _number(s.batch_budget),
            "truncateToolOutputLines": _number(s.line_cap),
            "imageTokenEstimate": _number(s.image_token_estimate),
            "files": [present_path(f, self.path_style) for f in s.files],
            "overrides": {name: _number(value) for name, value in s.overrides},
            "overrideOrigins": {name: override_origin(value, name) for name, value in s.overrides},
        }

    def _retention_json(self) -> dict:
        if self.retention is None:
            return {"available": False, "reason": self.retention_unavailable}
        analysis = self.retention
        ui = analysis.ui
        return {
            "available": True,
            "totalTokens": analysis.stats.total_tokens,
            "layers": analysis.layer_counts,
            "perTool": [self._tool_json(summary) for summary in analysis.per_tool()],
            "largest": [self.result_json(result) for result in analysis.largest(self.top)],
            "oversized": [self.result_json(r) for r in analysis.oversized()],
            "perTurn": self._per_turn_json(analysis),
            "uiHistory": None if ui is None else {
                "tools": len(ui.tools),
                "displayChars": ui.display_chars,
                "largeOutputs": ui.large_outputs,
                "structuredDisplays": len(ui.structured),
                "structuredDisplayChars": sum(t.chars for t in ui.structured),
            },
        }

    @staticmethod
    def _per_turn_json(analysis: RetentionAnalysis) -> list[dict]:
        rows = [{"turn": turn, "chars": _number(chars)} for turn, chars in analysis.chars_by_turn()]
        if analysis.measure is not None:
            for row, (_, sent) in zip(rows, analysis.chars_by_turn("sent")):
                row["sent"] = _number(sent)
        return rows

    @staticmethod
    def _tool_json(summary: ToolSummary) -> dict:
        data = {
            "tool": summary.tool,
            "count": summary.count,
            "chars": _number(summary.chars),
            "tokens": summary.tokens,
            "largest": _number(summary.largest),
            "oversized": summary.oversized,
            "errors": summary.errors,
            "budget": budget_json(summary.budget),
            "layers": dict(summary.by_layer),
        }
        if summary.sent is not None:
            data.update(sent=_number(summary.sent), sentTokens=summary.sent_tokens,
                        sentLargest=_number(summary.sent_largest))
        return data

    def result_json(self, result: ResultMeasure) -> dict:
        stub = result.stub
        data = {
            "ordinal": result.ordinal,
            "turn": result.turn,
            "position": [result.content_index, result.part_index],
            "callId": result.call_id,
            "tool": result.tool,
            "chars": _number(result.chars),
            "tokens": result.tokens,
            "rawChars": result.raw_chars,
            "isError": result.is_error,
            "budget": budget_json(result.budget),
            "budgetRatio": None if result.budget_ratio is None else round(result.budget_ratio, 3),
            "oversized": result.oversized,
            "layer": result.sentinel,
            "pointer": None if stub is None else {
                "paths": [present_path(p, self.path_style) for p in stub.paths],
                "sha256": stub.sha256,
                "declaredKB": stub.declared_kb,
                "declaredChars": stub.declared_chars,
                "declaredLines": stub.declared_lines,
                "note": stub.note,
            },
        }
        if result.sent is not None:
            data.update(sent=_number(result.sent), sentTokens=result.sent_tokens)
        return data
