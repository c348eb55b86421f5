"""The triage database's tables, versioned. docs/triage-database.md documents every column.

Bump SCHEMA_VERSION whenever a table or column changes; a database written by another
version is refused with a message instead of being half-understood. `results` has no
primary key on purpose: (session_key, ordinal) is unique by construction, and an index
would cost more on bulk inserts than it saves on the per-session deletes.
"""

from __future__ import annotations

from datetime import datetime

from doctor.triage.rows import FILE_TYPES, RESULT_TYPES, SESSION_TYPES

SCHEMA_VERSION = 3  # 3: sessions.started is a TIMESTAMP, the context window's columns; scan_labels, file_labels

_ARROW_TYPES = {"BIGINT": "int64", "DOUBLE": "float64", "VARCHAR": "string", "BOOLEAN": "bool_"}
_BIGINT = range(-(1 << 63), 1 << 63)
_LARGEST_DOUBLE = 1.7976931348623157e308


def _create(table: str, types: dict[str, str]) -> str:
    return f"CREATE TABLE {table} (\n" + ",\n".join(f"    {column} {kind}" for column, kind in types.items()) + "\n)"


def fits(sql_type: str, value) -> bool:
    """Whether a column of `sql_type` takes `value` as it is: the Python type DuckDB and Arrow expect,
    in range, and NULL only where the column allows it. Figures from a pasted report are JSON anyone
    could have edited; doctor's own figures always fit."""
    if value is None:
        return "NOT NULL" not in sql_type and "PRIMARY KEY" not in sql_type
    kind = sql_type.split()[0]
    if kind == "BIGINT":
        return type(value) is int and value in _BIGINT
    if kind == "DOUBLE":
        return type(value) in (int, float) and abs(value) <= _LARGEST_DOUBLE
    if kind == "BOOLEAN":
        return type(value) is bool
    if kind == "TIMESTAMP":
        return type(value) is datetime
    return type(value) is str

TABLES = {
    "meta": """CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)""",
    "scans": """CREATE TABLE scans (
    scan_id BIGINT PRIMARY KEY,
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    engine VARCHAR NOT NULL,
    files_seen BIGINT,
    files_new BIGINT,
    files_changed BIGINT,
    files_grown BIGINT,
    files_unchanged BIGINT,
    files_skipped BIGINT,
    results_written BIGINT,
    interrupted BOOLEAN
)""",
    "files": _create("files", FILE_TYPES),
    # `--label KEY=VALUE` given with a scan: the scan's labels, and every file it saw (an archive stands
    # for its members), so that answers can keep the sessions of one ticket or customer later.
    "scan_labels": """CREATE TABLE scan_labels (
    scan_id BIGINT NOT NULL,
    key VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    PRIMARY KEY (scan_id, key, value)
)""",
    "file_labels": """CREATE TABLE file_labels (
    file_key VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    PRIMARY KEY (file_key, key, value)
)""",
    "sessions": _create("sessions", SESSION_TYPES),
    "results": _create("results", {"session_key": "VARCHAR NOT NULL", **RESULT_TYPES}),
}


# What the answers count, as temporary views of the connection (never stored in the file, so a
# database someone sent cannot redefine them). One session (agent + session id, and for a
# subagent's file its own start) counts once, whichever files and pasted reports carried it:
# the session file before a report, a report with result rows before one without, then the
# copy with the most records and results. A file that is gone (deleted or renamed since it
# was scanned, or in an archive that is) leaves the answers; its rows stay until --prune.
COPY_IDENTITY = ("CASE WHEN s.session_id IS NULL THEN s.session_key ELSE s.agent END, "
                 "coalesce(s.session_id, s.session_key), s.format, s.started")
VIEWS = {
    "counted_sessions": f"""
        SELECT * EXCLUDE (copy_rank) FROM (
            SELECT s.*, count(*) OVER copies AS copies, row_number() OVER (copies ORDER BY s.source = 'report',
                   s.results_complete DESC, s.records DESC NULLS LAST, s.tool_results DESC NULLS LAST,
                   s.session_key) AS copy_rank
            FROM sessions s
            WHERE s.session_key NOT IN (SELECT file_key FROM files WHERE status = 'gone')
            WINDOW copies AS (PARTITION BY {COPY_IDENTITY}))
        WHERE copy_rank = 1""",
    "counted_results": """
        SELECT * FROM results WHERE session_key IN (SELECT session_key FROM counted_sessions)""",
}


def define_views(db) -> None:
    """The answers' views on this connection (see VIEWS)."""
    for name, sql in VIEWS.items():
        db.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql}")


def settle_counted(db) -> None:
    """Which copy of each session counts, decided once for the answers that follow (after any filter is
    applied): as a view, every answer ran the window over all sessions again, most of them more than once
    (eight times in the totals alone), and the answers of a 2,000-session database took ~1 s instead of
    ~0.1 s. A temporary table, so it too lives and dies with this connection. When every session counts
    (no copies, nothing gone: the usual case), the counted results are the results, without the join."""
    db.execute("DROP VIEW IF EXISTS temp.main.counted_results")
    db.execute("DROP VIEW IF EXISTS temp.main.counted_sessions")
    db.execute(f"CREATE TEMP TABLE counted_sessions AS {VIEWS['counted_sessions']}")
    every = db.execute("SELECT (SELECT count(*) FROM counted_sessions) = (SELECT count(*) FROM sessions)").fetchone()[0]
    db.execute(f"CREATE TEMP VIEW counted_results AS {'SELECT * FROM results' if every else VIEWS['counted_results']}")


def arrow_table(types: dict[str, str], rows: list[tuple]):
    """Rows (in the order of `types`) as an Arrow table: `arrow_columns` of their columns."""
    return arrow_columns(types, [list(values) for values in zip(*rows)] if rows else [[] for _ in types])


def arrow_columns(types: dict[str, str], columns: list[list]):
    """Columns (in the order of `types`) as an Arrow table with those names and SQL types, ready for
    `INSERT INTO … BY NAME SELECT * FROM …`. A DOUBLE column's integers are made floats first, rounded
    as DuckDB rounds them (Arrow refuses an integer a double cannot hold); a type Arrow is not told
    about here travels as text and DuckDB casts it on insert."""
    import pyarrow as pa

    arrays = []
    for (column, sql_type), values in zip(types.items(), columns):
        kind = sql_type.split()[0]
        if kind == "TIMESTAMP":
            arrays.append(pa.array(values, pa.timestamp("us")))
        elif kind == "DOUBLE":
            try:
                arrays.append(pa.array(values, pa.float64()))
            except pa.ArrowInvalid:  # an integer past 2**53: Arrow will not round it, Python does
                arrays.append(pa.array([None if value is None else float(value) for value in values], pa.float64()))
        else:
            arrays.append(pa.array(values, getattr(pa, _ARROW_TYPES.get(kind, "string"))()))
    return pa.Table.from_arrays(arrays, names=list(types))
