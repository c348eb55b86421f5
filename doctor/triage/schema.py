"""The triage database's tables, versioned. docs/triage-database.md documents every column.

Bump SCHEMA_VERSION whenever a table or column changes; a database written by another
version is refused with a message instead of being half-understood. `results` has no
primary key on purpose: (session_key, ordinal) is unique by construction, and an index
would cost more on bulk inserts than it saves on the per-session deletes.
"""

from __future__ import annotations

from datetime import datetime

from doctor.triage.rows import RESULT_COLUMNS, RESULT_TYPES, SESSION_TYPES

SCHEMA_VERSION = 2  # 2: sessions.started is a TIMESTAMP; scan_labels, file_labels

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
    "files": """CREATE TABLE files (
    file_key VARCHAR PRIMARY KEY,
    path VARCHAR NOT NULL,
    archive_key VARCHAR,
    size BIGINT,
    mtime_ns BIGINT,
    head_len BIGINT,
    head_digest VARCHAR,
    tail_len BIGINT,
    tail_digest VARCHAR,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    scan_id BIGINT NOT NULL
)""",
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


def arrow_results(session_key: str, rows: list[tuple]):
    """Result rows (RESULT_COLUMNS order) of one session as an Arrow table with the `results` table's
    columns and types, ready for `INSERT INTO results SELECT * FROM …`. A DOUBLE column's integers are
    made floats first, rounded as DuckDB rounds them (Arrow refuses an integer a double cannot hold)."""
    import pyarrow as pa

    columns = [pa.array([session_key] * len(rows), pa.string())]
    for column, values in zip(RESULT_COLUMNS, zip(*rows)):
        kind = RESULT_TYPES[column].split()[0]
        if kind == "DOUBLE":
            values = [None if value is None else float(value) for value in values]
        columns.append(pa.array(values, getattr(pa, _ARROW_TYPES[kind])()))
    return pa.Table.from_arrays(columns, names=["session_key", *RESULT_COLUMNS])
