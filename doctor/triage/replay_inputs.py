"""What `doctor scan --whatif/--sweep/--recommend` needs of each session, made by the scan and stored beside it.

The scan job replays each session of an agent doctor can replay (doctor/whatif/) and keeps, per session,
no text: per result its recorded size, cut, later turns, tool and the budget that would keep it whole;
per result that changes somewhere on a key's grid, its exact size at each grid value (doctor/whatif/
samples.py). Three tables, added to the schema without changing the others (docs/triage-database.md):

- `replay_keys`: one row per session and sampled key: the agent, the grid version and values, the value
  the session ran with (NULL: not set).
- `replay_results`: one row per result of a replayed session.
- `replay_samples`: one row per result and key where the size or cut is not the same at every sample.

A session the replay cannot read (an agent doctor has no replay for, a reader error) gets no rows and a
reason in `replay_keys`' place: `replay_sessions.reason` (one row per session scanned).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.triage.rows import storable

TABLES = {
    "replay_sessions": """CREATE TABLE IF NOT EXISTS replay_sessions (
    session_key VARCHAR PRIMARY KEY,
    agent VARCHAR,
    client VARCHAR,
    grid_version BIGINT,
    results BIGINT,
    unknown_results BIGINT,
    reason VARCHAR
)""",
    "replay_keys": """CREATE TABLE IF NOT EXISTS replay_keys (
    session_key VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    grid DOUBLE[] NOT NULL,
    session_value DOUBLE
)""",
    "replay_results": """CREATE TABLE IF NOT EXISTS replay_results (
    session_key VARCHAR NOT NULL,
    ordinal BIGINT NOT NULL,
    tool VARCHAR NOT NULL,
    batch BIGINT NOT NULL,
    later_turns BIGINT NOT NULL,
    recorded_chars BIGINT NOT NULL,
    recorded_cut BOOLEAN NOT NULL,
    raw_chars BIGINT,
    budget_key VARCHAR,
    budget_need DOUBLE,
    need_at_least BOOLEAN
)""",
    "replay_samples": """CREATE TABLE IF NOT EXISTS replay_samples (
    session_key VARCHAR NOT NULL,
    ordinal BIGINT NOT NULL,
    key VARCHAR NOT NULL,
    after BIGINT[] NOT NULL,
    low BIGINT[] NOT NULL,
    high BIGINT[] NOT NULL,
    cut BOOLEAN[] NOT NULL
)""",
}


@dataclass
class ReplayRows:
    """One session's rows for the three tables (plain, picklable: they cross process boundaries)."""

    agent: str | None
    client: str | None
    reason: str | None = None
    unknown: int = 0
    keys: list[tuple] = field(default_factory=list)  # (key, grid, session_value)
    results: list[tuple] = field(default_factory=list)
    samples: list[tuple] = field(default_factory=list)  # (ordinal, key, after, low, high, cut)


def rows_for(session, options) -> ReplayRows:
    """The replay rows of a session the job has opened (read again for the full text, as `doctor whatif` does).
    A failure is a reason, never an exception: the session's other rows are stored all the same."""
    from doctor.whatif.replay import AGENTS

    if session.agent not in AGENTS:
        return ReplayRows(session.agent, None, reason=f"doctor whatif has no replay for {session.agent} sessions")
    try:
        return _rows(session, options)
    except (OSError, ValueError) as exc:
        return ReplayRows(session.agent, None, reason=f"replay failed: {type(exc).__name__}: {exc}")


def _rows(session, options) -> ReplayRows:
    from doctor.core.jsvalues import js_len
    from doctor.core.sentinels import NONE, sentinel_kind
    from doctor.whatif import samples
    from doctor.whatif.replay import agent_module, result_sites
    from doctor.whatif.spill import SpillReader

    module = agent_module(session.agent)
    base = module.session_settings(session, options)
    sites = result_sites(list(session.history()))
    inputs = module.replay_inputs(session, sites, SpillReader(session, ()))
    found = ReplayRows(session.agent, f"{module.CLIENT} {module.VERSION}")
    for site, item in zip(sites, inputs):
        key, _ = module.budget_key(item.tool)
        need = module.budget_for(item) if key is not None else None
        found.results.append((site.ordinal, storable(item.tool), site.batch, site.later_turns, js_len(site.recorded),
                              sentinel_kind(site.recorded) != NONE,
                              js_len(item.raw.text) if item.raw.text is not None else None, key,
                              float(need[0]) if need else None, bool(need[1]) if need else None))
        found.unknown += item.raw.text is None
    for key, rows in samples.sample(module, inputs, sites, base.values, session.agent).items():
        grid = samples.GRIDS[session.agent, key]
        value = base.values.get(key)
        found.keys.append((key, [float(v) for v in grid.values], None if value is None else float(value)))
        found.samples.extend((row.ordinal, key, list(row.after), list(row.low), list(row.high), list(row.cut))
                             for row in rows)
    return found


def ensure_tables(db) -> None:
    """Add the replay tables to a database that lacks them (one written before they existed)."""
    for ddl in TABLES.values():
        db.execute(ddl)


def forget(db, session_key: str) -> None:
    forget_many(db, [session_key])


def forget_many(db, session_keys: list[str]) -> None:
    """Every replay row of these sessions: one statement per table, whatever their number."""
    if not session_keys:
        return
    for table in TABLES:
        db.execute(f"DELETE FROM {table} WHERE session_key IN (SELECT unnest($keys))", {"keys": session_keys})


def write_group(db, sessions: list[tuple[str, ReplayRows | None]]) -> None:
    """Several sessions' replay rows (none of them stored yet), one INSERT per table for all of them; inside
    the caller's transaction (a scan's group commit)."""
    from doctor.whatif.samples import GRID_VERSION

    found = [(key, rows) for key, rows in sessions if rows is not None]
    _append(db, "replay_sessions", [(key, storable(rows.agent), rows.client,
                                     GRID_VERSION if rows.reason is None else None, len(rows.results), rows.unknown,
                                     storable(rows.reason)) for key, rows in found],
            ("session_key", "agent", "client", "grid_version", "results", "unknown_results", "reason"))
    _append(db, "replay_keys", [(key, *row) for key, rows in found for row in rows.keys],
            ("session_key", "key", "grid", "session_value"))
    _append(db, "replay_results", [(key, *row) for key, rows in found for row in rows.results],
            ("session_key", "ordinal", "tool", "batch", "later_turns", "recorded_chars", "recorded_cut", "raw_chars",
             "budget_key", "budget_need", "need_at_least"))
    _append(db, "replay_samples", [(key, *row) for key, rows in found for row in rows.samples],
            ("session_key", "ordinal", "key", "after", "low", "high", "cut"))


_TYPES = {"session_key": "string", "agent": "string", "client": "string", "grid_version": "int64",
          "results": "int64", "unknown_results": "int64", "reason": "string", "key": "string",
          "session_value": "float64", "ordinal": "int64", "tool": "string", "batch": "int64", "later_turns": "int64",
          "recorded_chars": "int64", "recorded_cut": "bool_", "raw_chars": "int64", "budget_key": "string",
          "budget_need": "float64", "need_at_least": "bool_"}
_LISTS = {"grid": "float64", "after": "int64", "low": "int64", "high": "int64", "cut": "bool_"}


def _append(db, table: str, rows: list[tuple], columns: tuple[str, ...]) -> None:
    """Rows as one Arrow table with the table's types (DuckDB reads it column by column)."""
    if not rows:
        return
    import pyarrow as pa

    arrays = {}
    for name, values in zip(columns, zip(*rows)):
        kind = pa.list_(getattr(pa, _LISTS[name])()) if name in _LISTS else getattr(pa, _TYPES[name])()
        arrays[name] = pa.array(list(values), kind)
    new_rows = pa.table(arrays)  # noqa: F841 (DuckDB reads the local variable by its name)
    db.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM new_rows")
