"""`doctor memory --json` reports that users pasted or attached, read as sessions.

They carry no payloads, so support can ask for them instead of raw sessions. A report
made with `--results` carries every result's sizes (and the agent version, project hash
and file size) and fills the database as the session itself would; one without gives the
session's totals, and its result rows are marked incomplete.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from doctor.core.sentinels import LAYERS
from doctor.report.audit_summary import AUDIT_CATEGORIES
from doctor.sources.base import SourceError
from doctor.sources.jsonl import LINE_CAP, loads, over_cap_message
from doctor.triage.rows import (
    LAYER_COLUMNS, RESULT_COLUMNS, RESULT_TYPES, SESSION_TYPES, FileJob, FileOutcome, ResultBatch, finish, started_at, storable,
    tool_type)
from doctor.triage.schema import fits

MARKERS = (b'"schemaVersion"', b'"generator"', b'"toolResultRetention"')
SNIFF_BYTES = 4096
REPORT_SCHEMA = Path(__file__).resolve().parents[1] / "report" / "schema" / "memory-report.schema.json"
PROBLEM_KINDS = frozenset(kind for kinds in AUDIT_CATEGORIES.values() for kind in kinds)


def read_report(path: Path) -> dict | None:
    """The report when `path` holds one, else None; a damaged report is a SourceError."""
    if path.suffix != ".json":
        return None
    with open(path, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
        if not (b'"schemaVersion"' in head and b'"generator"' in head):
            return None
        size = os.fstat(handle.fileno()).st_size
        if size > LINE_CAP:
            raise SourceError(path, over_cap_message(size) + " (a doctor report)")
        data = head + handle.read(LINE_CAP)
    try:
        report = loads(data)
    except ValueError as exc:
        raise SourceError(path, f"a doctor report that is not valid JSON ({exc})") from None
    generator = report.get("generator") if isinstance(report, dict) else None
    if not (isinstance(generator, dict) and generator.get("name") == "doctor" and isinstance(report.get("retention"), dict)):
        return None
    return report


def outcome(job: FileJob, report: dict, path: Path) -> FileOutcome:
    validate(report, path)
    source = report["source"]
    stats = report.get("toolResultRetention")
    retention = report["retention"]
    available = retention.get("available") is True and isinstance(stats, dict)
    results = retention.get("results") if available else None
    layers = retention.get("layers") or {}
    spill = report.get("spill")
    rows = [_row(result) for result in results] if isinstance(results, list) else []
    row = {
        "session_key": job.key,
        "path": job.shown,
        "source": "report",
        "agent": source.get("agent"),
        "agent_version": source.get("agentVersion"),
        "format": source.get("format"),
        "session_id": source.get("sessionId"),
        "project_hash": source.get("projectHash"),
        "started": started_at(source.get("started")),
        "turns": None,  # a report does not say how many prompts the session had
        "size_bytes": source.get("sizeBytes"),
        "records": source.get("records"),
        "tool_results": stats["toolResultCount"] if available else None,
        "retained_chars": stats["totalChars"] if available else None,
        "retained_tokens": retention.get("totalTokens") if available else None,
        **_window(report),
        "largest_chars": stats["largestResultChars"] if available else None,
        "oversized": stats["oversizedResultCount"] if available else None,
        **{column: layers.get(layer, 0) for column, layer in zip(LAYER_COLUMNS, LAYERS)},
        "side_channel_chars": sum(copy.get("chars", 0) for copy in report.get("sideChannel", [])),
        "side_channel_copies": sum(copy.get("count", 0) for copy in report.get("sideChannel", [])),
        "spill_findings": None if not isinstance(spill, dict) else sum(
            1 for finding in spill.get("findings", [])
            if finding.get("severity") != "info" and finding.get("kind") in PROBLEM_KINDS),
        "input_problems": sum(1 for issue in report.get("issues", []) if issue.get("severity") == "warning"),
        "retention_unavailable": None if available else retention.get("reason"),
        "results_complete": isinstance(results, list),
    }
    _check_figures(path, row, rows)
    return finish(job, row, ResultBatch.from_rows(rows))


def _window(report: dict) -> dict:
    """The context window the report states (agentMeasure.contextWindow), checked like every figure."""
    measure = report.get("agentMeasure")
    window = measure.get("contextWindow") if isinstance(measure, dict) else None
    if not isinstance(window, dict):
        return {"context_window_tokens": None, "context_window_share": None}
    return {"context_window_tokens": window.get("tokens"), "context_window_share": window.get("share")}


@functools.cache
def _validator():
    """The published schema of `doctor memory --json`. It is not checked against the metaschema here
    (tests/report/test_report_schema.py does): that took each scan worker 0.6 s."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8")))


def validate(report: dict, path: Path) -> None:
    """A pasted report must be what `doctor memory --json` publishes (doctor/report/schema): anything
    else (a schemaVersion this doctor does not know, `source: null`, a count that is a string, a size
    past any measurement) is refused naming the field and its value, before a figure is stored. One
    rule the schema cannot state is checked here: each result's ordinal is unique."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(report))
    if error is not None:
        raise SourceError(path, f"a doctor report that does not follow doctor's published schema: "
                                f"{error.json_path} is {_shown(error.instance)} ({_brief(error)})")
    results = report["retention"].get("results") or []
    seen: set[int] = set()
    for index, result in enumerate(results):
        if result["ordinal"] in seen:
            raise SourceError(path, f"a doctor report whose $.retention.results[{index}].ordinal is "
                                    f"{result['ordinal']}, an ordinal an earlier result has (each is unique)")
        seen.add(result["ordinal"])


def _brief(error) -> str:
    """jsonschema's reason without the value it repeats (shown already, capped)."""
    if error.validator == "const":
        return f"expected {error.validator_value!r}"
    if error.validator == "type":
        return f"expected {' or '.join(error.validator_value) if isinstance(error.validator_value, list) else error.validator_value}"
    if error.validator in ("maximum", "minimum"):
        return f"{error.validator} {error.validator_value!r}"
    if error.validator == "required":
        return error.message.replace(repr(error.instance), "").strip() if len(error.message) < 120 else "a key is missing"
    if error.validator == "additionalProperties":
        return "a key the schema does not have"
    return error.validator


def _check_figures(path: Path, row: dict, rows: list[tuple]) -> None:
    """A report is JSON anyone could have edited: one whose figures the database cannot take as they
    are (a count that is a string, a flag that is a number, a size past 64 bits) is skipped, naming
    the first such figure, instead of stopping the scan at the insert."""
    for column, value in row.items():
        if not fits(SESSION_TYPES[column], value):
            raise SourceError(path, f"a doctor report whose {column} is {_shown(value)}")
    for result in rows:
        for column, value in zip(RESULT_COLUMNS, result):
            if not fits(RESULT_TYPES[column], value):
                raise SourceError(path, f"a doctor report whose result {_shown(result[0])} has {column} {_shown(value)}")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _row(result: dict) -> tuple:
    budget = result.get("budget") or {}
    return tuple(map(storable, (
        result["ordinal"], result["turn"], result["tool"], tool_type(result["tool"], budget.get("source", "")),
        result["rawChars"], float(result["chars"]), result["tokens"], budget.get("chars"), budget.get("source"),
        result["layer"], result["oversized"], result["isError"], (result.get("pointer") or {}).get("declaredChars"),
        (result.get("pointer") or {}).get("declaredKB"),
    )))
