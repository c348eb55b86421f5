"""What support asks of a triage database, answered with SQL and laid out as report sections.

Every figure is computed by DuckDB from the `sessions` and `results` tables (see
docs/triage-database.md), so `--query` can reproduce any of them. `collect` gathers
the answers into one JSON-ready dict; `render` lays it out as text, Markdown or HTML
through the same section renderers as `doctor memory`, or prints the JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb

from doctor.report.inert import inert_json, inert_line
from doctor.triage.bins import bin_label, bin_sql
from doctor.triage.schema import SCHEMA_VERSION
from doctor.triage.versions import version_order

QUANTILES = "[0.5, 0.9, 0.99]"


class QueryError(Exception):
    """A --query that is not valid SQL or fails (the message is DuckDB's first line)."""


class QueryRefused(QueryError):
    """A --query doctor does not run: more than one statement, not a SELECT, or reaching for files,
    the network or extensions (the answering connection has no access to them: store.ANSWERING)."""


def _rows(db, sql: str, params=()) -> list[dict]:
    cursor = db.execute(sql, list(params))
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def tools_ranked(db, top: int) -> list[dict]:
    """Tools by injected context: count, sum, p50/p90/p99/max of chars and tokens."""
    rows = _rows(db, f"""
        SELECT tool, tool_type, count(*) AS results, sum(injected_chars) AS chars, sum(tokens) AS tokens,
               quantile_disc(injected_chars, {QUANTILES}) AS chars_q, max(injected_chars) AS chars_max,
               quantile_disc(tokens, {QUANTILES}) AS tokens_q, max(tokens) AS tokens_max,
               sum(oversized::INT) AS oversized
        FROM counted_results GROUP BY tool, tool_type ORDER BY chars DESC, tool LIMIT ?""", [top])
    for row in rows:
        row["chars_p50"], row["chars_p90"], row["chars_p99"] = row.pop("chars_q")
        row["tokens_p50"], row["tokens_p90"], row["tokens_p99"] = row.pop("tokens_q")
    return rows


def oversized_by_version(db, top: int) -> list[dict]:
    """Oversized results per 1,000, by tool × agent × agent version (highest rate first)."""
    return _rows(db, """
        SELECT r.tool, s.agent, coalesce(s.agent_version, 'unknown') AS agent_version, count(*) AS results,
               sum(r.oversized::INT) AS oversized, round(1000.0 * sum(r.oversized::INT) / count(*), 1) AS per_1000
        FROM counted_results r JOIN counted_sessions s USING (session_key)
        GROUP BY r.tool, s.agent, s.agent_version
        ORDER BY per_1000 DESC, results DESC, r.tool LIMIT ?""", [top])


def layer_rates(db) -> list[dict]:
    """Per agent and layer: results it bounded, their share of the agent's results, kept vs declared sizes
    (declared in the unit each stub states: characters for Claude and Gemini, KB for Qwen)."""
    return _rows(db, """
        SELECT s.agent, r.layer, count(*) AS results,
               round(100.0 * count(*) / sum(count(*)) OVER (PARTITION BY s.agent), 2) AS percent,
               sum(r.injected_chars) AS injected_chars, sum(r.raw_chars) AS raw_chars,
               sum(r.declared_chars) AS declared_chars, sum(r.declared_kb) AS declared_kb
        FROM counted_results r JOIN counted_sessions s USING (session_key)
        GROUP BY s.agent, r.layer ORDER BY s.agent, results DESC, r.layer""")


def raw_vs_injected(db, top: int) -> list[dict]:
    """Per tool: the output strings kept (raw), what the model is charged (injected), and what
    spill stubs say the full outputs were (declared, where a layer bounded them)."""
    return _rows(db, """
        SELECT tool, count(*) AS results, sum(raw_chars) AS raw_chars, sum(injected_chars) AS injected_chars,
               round(sum(injected_chars) / nullif(sum(raw_chars), 0), 3) AS injected_per_raw,
               count(coalesce(declared_chars, declared_kb)) AS bounded_with_size, sum(declared_chars) AS declared_chars,
               sum(declared_kb) AS declared_kb
        FROM counted_results GROUP BY tool ORDER BY injected_chars DESC, tool LIMIT ?""", [top])


def sessions_at_risk(db, top: int) -> list[dict]:
    """Sessions ranked by risk: oversized results, then spill findings, then retained context. Each is
    named by its session id and a path that no other session shares: a shortened path that another
    session stores too (`/…/qwen/session.jsonl` twice) gets `#` and the start of its file key."""
    rows = _rows(db, """
        WITH named AS (SELECT *, count(*) OVER (PARTITION BY path) AS sharing FROM counted_sessions)
        SELECT session_key, path, sharing, agent, agent_version, session_id, tool_results, retained_tokens,
               context_window_tokens, context_window_share, largest_chars, oversized, spill_findings,
               input_problems, retention_unavailable
        FROM named
        ORDER BY coalesce(oversized, 0) DESC, coalesce(spill_findings, 0) DESC, coalesce(retained_tokens, 0) DESC,
                 path, session_key
        LIMIT ?""", [top])
    for row in rows:
        if row.pop("sharing") > 1:
            row["path"] = f"{row['path']} #{row['session_key'][:8]}"
        row["reason"] = risk_reason(row)
    return rows


def risk_reason(row: dict) -> str:
    reasons = []
    if row["retention_unavailable"]:
        reasons.append("retention unavailable")
    if row["oversized"]:
        reasons.append(f"{row['oversized']:,} oversized result{'s' if row['oversized'] != 1 else ''}")
    if row["spill_findings"]:
        reasons.append(f"{row['spill_findings']:,} spill finding{'s' if row['spill_findings'] != 1 else ''}")
    if row["input_problems"]:
        reasons.append(f"{row['input_problems']:,} input problem{'s' if row['input_problems'] != 1 else ''}")
    if row["retained_tokens"]:
        reasons.append(f"~{row['retained_tokens']:,} tokens retained")
    return "; ".join(reasons) or "nothing retained"


HISTOGRAM_TOOLS = 6
GROWTH_TURNS = 40
SIZE_BIN = bin_sql("injected_chars")


def histograms(db, tools: int = HISTOGRAM_TOOLS) -> list[dict]:
    """Per tool (the largest by injected chars), results per size bin (`bins`: the metrics' edges), gaps as 0."""

    rows = db.execute(f"""
        WITH top AS (SELECT tool FROM counted_results GROUP BY tool ORDER BY sum(injected_chars) DESC, tool LIMIT ?)
        SELECT tool, {SIZE_BIN} AS bin, count(*) FROM counted_results WHERE tool IN (SELECT tool FROM top)
        GROUP BY ALL""", [tools]).fetchall()
    order = [row[0] for row in db.execute(
        "SELECT tool FROM counted_results GROUP BY tool ORDER BY sum(injected_chars) DESC, tool LIMIT ?", [tools]).fetchall()]
    counts: dict[str, dict[int, int]] = {tool: {} for tool in order}
    for tool, size_bin, count in rows:
        counts[tool][size_bin] = count
    return [{"tool": tool, "bins": [{"bin": k, "upTo": bin_label(k), "results": bins.get(k, 0)}
                                    for k in range(min(bins), max(bins) + 1)]}
            for tool, bins in counts.items()]


def oversized_rate_by_version(db) -> list[dict]:
    """Per agent and version (in version order, not text order), oversized results per 1,000."""
    rows = _rows(db, """
        SELECT s.agent, coalesce(s.agent_version, 'unknown') AS agent_version, count(*) AS results,
               round(1000.0 * sum(r.oversized::INT) / count(*), 1) AS per_1000
        FROM counted_results r JOIN counted_sessions s USING (session_key) GROUP BY ALL""")
    return sorted(rows, key=lambda row: (row["agent"] or "", version_order(row["agent_version"])))


def growth_per_turn(db, turns: int = GROWTH_TURNS) -> list[dict]:
    """Per turn (the n-th prompt the person typed, `doctor.core.turns`; 0: before the first): the sessions
    that reached it, those of them with tool results in it, the injected chars it added, and those chars
    per session that reached it. Sessions that do not say how many prompts they had (pasted reports)
    are left out (`growth_sessions_unknown` counts them)."""
    return _rows(db, """
        WITH known AS (SELECT session_key, turns FROM counted_sessions WHERE turns IS NOT NULL),
             per AS (SELECT r.session_key, r.turn, sum(r.injected_chars) AS chars
                     FROM counted_results r JOIN known USING (session_key) GROUP BY ALL),
             steps AS (SELECT unnest(range(0, least(?, (SELECT max(turns) FROM known)) + 1)) AS turn)
        SELECT steps.turn,
               (SELECT count(*) FROM known WHERE known.turns >= steps.turn) AS sessions_reached,
               count(per.session_key) AS sessions_with_results,
               coalesce(sum(per.chars), 0) AS chars,
               round(coalesce(sum(per.chars), 0) / (SELECT count(*) FROM known WHERE known.turns >= steps.turn), 1)
                   AS chars_per_session_reached
        FROM steps LEFT JOIN per USING (turn)
        GROUP BY steps.turn HAVING steps.turn > 0 OR count(per.session_key) > 0
        ORDER BY steps.turn""", [turns])


def growth_sessions_unknown(db) -> int:
    return db.execute("SELECT count(*) FROM counted_sessions WHERE turns IS NULL").fetchone()[0]


def totals(db) -> dict:
    """The database's totals, per session as each session's report states them (its retained tokens are
    Qwen's estimate of its total, not the sum of per-result estimates), so they add up to the sessions'
    own figures and include sessions without per-result rows."""
    row = _rows(db, """
        SELECT (SELECT count(*) FROM counted_sessions) AS sessions,
               (SELECT count(*) FROM counted_sessions WHERE source = 'report') AS from_reports,
               (SELECT coalesce(sum(tool_results), 0) FROM counted_sessions) AS results,
               (SELECT coalesce(sum(retained_chars), 0) FROM counted_sessions) AS injected_chars,
               (SELECT coalesce(sum(retained_tokens), 0) FROM counted_sessions) AS tokens,
               (SELECT coalesce(sum(oversized), 0) FROM counted_sessions) AS oversized,
               (SELECT count(*) FROM files WHERE status = 'skipped') AS files_skipped,
               (SELECT count(*) FROM files WHERE status = 'not-session') AS files_not_sessions,
               (SELECT count(*) FROM counted_sessions WHERE NOT results_complete) AS without_result_rows,
               (SELECT count(*) FROM sessions s WHERE s.session_key NOT IN (SELECT file_key FROM files
                    WHERE status = 'gone')) - (SELECT count(*) FROM counted_sessions) AS extra_copies,
               (SELECT count(*) FROM files WHERE status = 'gone') AS files_gone""")[0]
    row["agents"] = _rows(db, """SELECT agent, coalesce(agent_version, 'unknown') AS agent_version, count(*) AS sessions
                                 FROM counted_sessions GROUP BY ALL ORDER BY sessions DESC, agent, agent_version""")
    row["skipped"] = _rows(db, """SELECT reason, count(*) AS files FROM files WHERE status = 'skipped'
                                  GROUP BY reason ORDER BY files DESC, reason""")
    return row


def skipped_files(db, limit: int | None, *, everything: bool = False) -> list[dict]:
    """The files scans skipped, by name, newest scan first (at most `limit`; None: all); `everything`
    adds the files found in folders that are not sessions (status `not-session`)."""
    statuses = ("skipped", "not-session") if everything else ("skipped",)
    return _rows(db, f"""
        SELECT path, status, reason, scan_id FROM files WHERE status IN ({', '.join('?' for _ in statuses)})
        ORDER BY status, scan_id DESC, path {'LIMIT ?' if limit is not None else ''}""",
                 [*statuses, *([limit] if limit is not None else [])])


def collect(store, summary=None, *, top: int = 10, compare: tuple[str, str, str] | None = None,
            filters=None, all_skipped: bool = False) -> dict:
    """The answers; `filters` only names the filters already applied to the connection (`filters.apply`);
    `all_skipped` (--skipped): every skipped and not-session file by name instead of the `top` skipped."""
    db = store.db
    data = {
        "schemaVersion": SCHEMA_VERSION,
        "database": str(store.path),
        "filters": filters.describe() if filters else [],
        "scan": None if summary is None else {
            **{name: summary.counts.get(name, 0)
               for name in ("seen", "members", "new", "changed", "grown", "unchanged", "replayed", "skipped",
                            "gone")},
            "resultsWritten": summary.counts.get("results_written", 0),
            "notSessions": summary.counts.get("not_sessions", 0),
            "skippedReasons": [{"reason": reason, "files": count} for reason, count in summary.skipped.most_common()],
        },
        "totals": totals(db),
        "skippedFiles": skipped_files(db, None if all_skipped else top, everything=all_skipped),
        "tools": tools_ranked(db, top),
        "oversizedByVersion": oversized_by_version(db, top),
        "layers": layer_rates(db),
        "rawVsInjected": raw_vs_injected(db, top),
        "sessionsAtRisk": sessions_at_risk(db, top),
        "charts": {
            "histograms": histograms(db),
            "oversizedRateByVersion": oversized_rate_by_version(db),
            "growthPerTurn": growth_per_turn(db),
            "growthSessionsUnknown": growth_sessions_unknown(db),
        },
    }
    if compare is not None:
        from doctor.triage.compare import compare as compare_sides

        data["compare"] = compare_sides(db, *compare, top)
    return data


def render(data: dict, fmt: str) -> str:
    if fmt == "json":
        return inert_json(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n"
    from doctor.triage.layout import document

    return document(data, fmt)


def query_text(store, sql: str, fmt: str, filters=None) -> str:
    """One SELECT's rows: JSON objects with --format json, else a tab-separated table. It runs on the
    answering connection (read-only, no file or network access, configuration locked). The filters
    shadow `sessions` and `results` here too (`triage.main.sessions`, for `triage.duckdb`, names the
    whole table)."""
    from doctor.triage.filters import apply

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
    if len(statements) != 1:
        raise QueryRefused(f"one statement only ({len(statements)} given)")
    if statements[0].type != duckdb.StatementType.SELECT:
        raise QueryRefused(f"a SELECT only ({statements[0].type.name} given)")
    try:
        cursor = store.db.cursor()
        if filters:
            apply(cursor, filters)
        cursor.execute(sql)
        names = [column[0] for column in cursor.description or ()]
        rows = cursor.fetchall()
    except duckdb.PermissionException as exc:
        raise QueryRefused(str(exc).splitlines()[0]) from None
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
    if fmt == "json":
        return inert_json(json.dumps([dict(zip(names, row)) for row in rows], indent=2, ensure_ascii=False,
                                     default=str)) + "\n"
    lines = ["\t".join(map(inert_line, names)), *("\t".join(map(inert_line, row)) for row in rows)]
    return "\n".join(lines) + "\n"


def export_parquet(store, directory: Path, filters=None) -> None:
    """`sessions.parquet` and `results.parquet` in `directory`, each 0600 (they name paths and tools):
    each is written to a new private file beside it, opened without following a link, and renamed over
    it. The rows come out as Arrow and pyarrow writes them: the answering connection may not write files."""
    import pyarrow.parquet as parquet

    from doctor.safety.writes import Replacing

    from doctor.triage.filters import apply

    directory.mkdir(parents=True, exist_ok=True)
    for table in ("sessions", "results"):
        cursor = store.db.cursor()
        if filters:
            apply(cursor, filters)  # a cursor is a connection of its own: the filters' views are made again
        rows = cursor.sql(f"SELECT * FROM {table} ORDER BY ALL").to_arrow_table()
        with Replacing(directory / f"{table}.parquet") as temporary:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(descriptor, "wb") as out:
                parquet.write_table(rows, out)
