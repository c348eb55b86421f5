"""The per-file job: one session file (or pasted report, or archive member) in, plain rows out.

It runs in a worker process (local pool or Dask), so it takes and returns picklable
data only and never touches the database. It goes through the same path as
`doctor memory` (reader → analysis → spill audit), so a scanned session has the
figures `doctor memory` shows for it (all but the UI history's, which the scan stores none of and
so leaves unread). No payload text leaves the job: names, sizes,
counts, layers and budgets only. A file that cannot be read is an outcome with a
reason, never an exception: one bad file must not stop a scan of thousands.
"""

from __future__ import annotations

from pathlib import Path

from doctor.assemble import ReportOptions, report_for_session, scan_facts
from doctor.core.estimator import tokens_for_chars
from doctor.core.retention import whole_number
from doctor.core.sentinels import LAYERS
from doctor.report.audit_summary import category_counts
from doctor.sources.base import SourceError, UnknownFormat
from doctor.sources.registry import open_session
from doctor.triage import pasted, replay_inputs
from doctor.triage.rows import (
    LAYER_COLUMNS,
    NOT_SESSION,
    SKIPPED,
    FileJob,
    ResultBatch,
    FileOutcome,
    finish,
    started_at,
    storable,
    tool_type,
)

def scan_batch(jobs: list[FileJob]) -> list[FileOutcome]:
    """The outcomes of several files, one after the other: an engine's task (see `engines.batches`)."""
    return [scan_file(job) for job in jobs]


def scan_file(job: FileJob) -> FileOutcome:
    """Scan one file; every failure becomes a skipped outcome with its reason."""
    try:
        # An archive member is its unpacked copy (archives.Unpacked): its spill files are not beside it,
        # so the spill audit is not run (spill_findings is NULL).
        return _scan_path(job, Path(job.path), audit=job.member is None)
    except SourceError as exc:
        return FileOutcome(job.key, job.shown, SKIPPED, reason=_reason(exc))
    except OSError as exc:
        return FileOutcome(job.key, job.shown, SKIPPED, reason=f"cannot read: {exc.strerror or exc}")
    except Exception as exc:  # a reader bug on one odd file must not end the scan of the rest
        return FileOutcome(job.key, job.shown, SKIPPED, reason=f"internal error: {type(exc).__name__}: {exc}")


def _reason(exc: SourceError) -> str:
    """The message without the location prefix (the database shows paths per --paths, not raw)."""
    text = str(exc)
    location = f"{exc.path}:{exc.line}: " if exc.line is not None else f"{exc.path}: "
    if text.startswith(location):
        text = text[len(location):]
        return f"line {exc.line}: {text}" if exc.line is not None else text
    return text


def _scan_path(job: FileJob, path: Path, *, audit: bool) -> FileOutcome:
    report = pasted.read_report(path)
    if report is not None:
        return pasted.outcome(job, report, path)
    try:
        session = open_session(path)
    except UnknownFormat as exc:
        if not _well_formed_json(path):
            raise  # garbage, an empty or a torn file: maybe a damaged session, so skipped and counted
        return FileOutcome(job.key, job.shown, NOT_SESSION, reason=_reason(exc))
    options = job.options or ReportOptions()
    report = report_for_session(session, options, measure_ui=False)  # the scan stores no UI-history figure
    findings = _spill_findings(session, report) if audit else None
    outcome = _outcome(job, session, report, findings)
    if job.replay:
        outcome.replay = replay_inputs.rows_for(session, options)
    return outcome


WHOLE_JSON_BYTES = 1 << 20  # an agent's settings or metadata file is small; a larger file is judged by its first line


def _well_formed_json(path: Path) -> bool:
    """Whether the file is JSON (a whole document, or JSON lines): then it is some program's data (an
    agent's settings, a subagent's `.meta.json`), not a session, and a scan of a folder need not call
    it skipped. A file that is not JSON at all may be a damaged session: that stays skipped."""
    from doctor.sources.base import open_session_file
    from doctor.sources.jsonl import loads
    from doctor.sources.sniffing import Head

    with open_session_file(path) as handle:
        data = handle.read(WHOLE_JSON_BYTES + 1)
    if len(data) <= WHOLE_JSON_BYTES:
        try:
            return isinstance(loads(data), (dict, list))
        except ValueError:
            pass
    values = Head.read(path).values(1)
    return bool(values) and isinstance(values[0], (dict, list))


def _spill_findings(session, report) -> int:
    from doctor.spill.audit import audit_spill
    from doctor.spill.pointers import pointers_for
    from doctor.spill.resolve import SpillLocator

    locator = SpillLocator(session.path, session_roots=session.spill_roots)
    audit = audit_spill(session, pointers_for(session, report.retention), locator)
    return sum(category_counts(audit).values())


def _outcome(job: FileJob, session, report, spill_findings: int | None) -> FileOutcome:
    analysis = report.retention
    results = result_batch(analysis) if analysis is not None else ResultBatch.from_rows([])
    layers = analysis.layer_counts if analysis is not None else {}
    stats = analysis.stats if analysis is not None else None
    facts = scan_facts(session)
    row = {
        "session_key": job.key,
        "path": job.shown,
        "source": "session",
        "agent": session.agent,
        "agent_version": facts["agentVersion"],
        "format": session.format,
        "session_id": session.session_id,
        "project_hash": facts["projectHash"],
        "started": started_at(session.started),
        "turns": analysis.table.turns if analysis is not None else None,
        "size_bytes": facts["sizeBytes"],
        "records": facts["records"],
        "tool_results": stats.tool_result_count if stats else None,
        "retained_chars": whole_number(stats.total_chars) if stats else None,
        "retained_tokens": stats.total_tokens if stats else None,
        **_window(report),
        "largest_chars": whole_number(stats.largest_result_chars) if stats else None,
        "oversized": stats.oversized_result_count if stats else None,
        **{column: layers.get(layer, 0) for column, layer in zip(LAYER_COLUMNS, LAYERS)},
        "side_channel_chars": sum(copy.chars for copy in session.side_channel.values()),
        "side_channel_copies": sum(copy.count for copy in session.side_channel.values()),
        "spill_findings": spill_findings,
        "input_problems": sum(1 for issue in session.issues if issue.severity == "warning"),
        "retention_unavailable": report.retention_unavailable,
        "results_complete": analysis is not None,
    }
    return finish(job, row, results)


def _window(report) -> dict:
    """The context window's size and the share the tool results hold, as `doctor memory --json` states them."""
    from doctor.report.terms import terms_of

    window = report.context_window
    if window is None or report.retention is None:
        return {"context_window_tokens": None, "context_window_share": None}
    tokens = terms_of(report).totals(report.retention)[1]
    return {"context_window_tokens": window.tokens, "context_window_share": window.to_json(tokens)["share"]}


def result_batch(analysis) -> ResultBatch:
    """The result rows, column by column in RESULT_COLUMNS order, from the analysis's own columns (a
    row object per result cost the workers more than the rest of storing it); declared_chars and
    declared_kb are the full output's size a spill stub states, in the unit it states it (Claude and
    Gemini: characters; Qwen: KB)."""
    found = analysis.result_columns()
    count = len(found.turns)
    slots = found.tool_slots
    # What depends on the tool alone, once per tool: its stored name, type and budget.
    per_tool = [(storable(tool), tool_type(tool, budget.source), budget.as_json_number(), budget.source)
                for tool, budget in zip(found.tools, found.budgets)]
    names, types, budgets, sources = ([[entry[i] for entry in per_tool] for i in range(4)])
    declared_chars: list[int | None] = [None] * count
    declared_kb: list[int | None] = [None] * count
    for ordinal, stub in found.stubs.items():
        declared_chars[ordinal], declared_kb[ordinal] = stub.declared_chars, stub.declared_kb
    return ResultBatch([
        list(range(count)), found.turns, [names[s] for s in slots], [types[s] for s in slots], found.raw_chars,
        found.chars, [tokens_for_chars(chars) for chars in found.chars], [budgets[s] for s in slots],
        [sources[s] for s in slots], found.layers, found.oversized, found.errors, declared_chars, declared_kb,
    ])
