"""`--since/--until`, `--where FIELD=VALUE` and `--label KEY=VALUE`: which sessions every answer and export covers.

The filters become temporary views named `sessions` and `results` on the connection
that answers: they shadow the tables, so every answer, chart, comparison, metric, Parquet
export, `--query` and the Fleet screen see the same subset without a query of their own
knowing about filters (in `--query`, `triage.main.sessions` still names the whole table of `triage.duckdb`).
Conditions on one field are alternatives (`--where agent=claude agent=codex`); different
fields must all hold. `tool=` keeps that tool's results, and the sessions that have one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

FIELDS = {"agent": "agent", "agent_version": "agent_version", "project": "project_hash", "tool": None,
          "format": "format", "source": "source", "session": "session_id"}


class FilterError(ValueError):
    """A filter that cannot be understood (unknown field, malformed date)."""


@dataclass(frozen=True)
class Filters:
    since: datetime | None = None  # UTC, inclusive
    until: datetime | None = None  # UTC, exclusive
    where: dict[str, tuple[str, ...]] = field(default_factory=dict)
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.since or self.until or self.where or self.labels)

    def describe(self) -> list[str]:
        """The filters in words, for the report's first lines."""
        parts = []
        if self.since:
            parts.append(f"started at or after {self.since:%Y-%m-%d %H:%M:%S} UTC")
        if self.until:
            parts.append(f"started before {self.until:%Y-%m-%d %H:%M:%S} UTC")
        parts += [f"{name} is {' or '.join(values)}" for name, values in self.where.items()]
        parts += [f"labelled {' or '.join(f'{name}={value}' for value in values)}"
                  for name, values in self.labels.items()]
        return parts


def parse_time(text: str, *, end: bool = False) -> datetime:
    """An ISO date or date-time (no zone: UTC) as naive UTC; `end`: a bare date means the day after it
    (so `--until 2026-03-01` keeps that day)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise FilterError(f"{text!r}: expected a date or date-time, e.g. 2026-03-01 or 2026-03-01T14:30Z") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    if end and len(text.strip()) == 10:
        moment += timedelta(days=1)
    return moment


def _pairs(items: list[str] | None, option: str, fields=None) -> dict[str, tuple[str, ...]]:
    pairs: dict[str, tuple[str, ...]] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise FilterError(f"{option} {item!r}: expected KEY=VALUE")
        if fields is not None and name not in fields:
            raise FilterError(f"{option}: unknown field {name!r} (choose from {', '.join(fields)})")
        if not value.isprintable() or len(value) > 300:
            raise FilterError(f"{option} {name}: the value must be printable text of at most 300 characters")
        pairs[name] = (*pairs.get(name, ()), value)
    return pairs


def parse(since: str | None = None, until: str | None = None, where: list[str] | None = None,
          labels: list[str] | None = None) -> Filters:
    return Filters(since=parse_time(since) if since else None, until=parse_time(until, end=True) if until else None,
                   where=_pairs(where, "--where", FIELDS), labels=_pairs(labels, "--label"))


def parse_labels(items: list[str] | None) -> dict[str, tuple[str, ...]]:
    """`--label KEY=VALUE…` given with a scan: what the scan records for every file it sees."""
    return _pairs(items, "--label")


def _literal(value) -> str:
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    return "'" + str(value).replace("'", "''") + "'"


def _among(column: str, values) -> str:
    return f"{column} IN ({', '.join(map(_literal, values))})"


def _project_values(values: tuple[str, ...]) -> list[str]:
    """A project given as its hash or as its folder (hashed as `doctor memory` hashes it)."""
    from doctor.report.paths import project_hash

    return sorted({*values, *(project_hash(value) for value in values)})


def _conditions(filters: Filters, catalog: str) -> list[str]:
    conditions = []
    if filters.since:
        conditions.append(f"started >= {_literal(filters.since)}")
    if filters.until:
        conditions.append(f"started < {_literal(filters.until)}")
    for name, values in filters.where.items():
        if name == "tool":
            conditions.append(f"session_key IN (SELECT session_key FROM {catalog}.main.results "
                              f"WHERE {_among('tool', values)})")
        elif name == "project":
            conditions.append(_among("project_hash", _project_values(values)))
        else:
            conditions.append(_among(FIELDS[name], values))
    for name, values in filters.labels.items():
        conditions.append(
            f"session_key IN (SELECT f.file_key FROM {catalog}.main.files f JOIN {catalog}.main.file_labels l "
            f"ON l.file_key IN (f.file_key, f.archive_key) WHERE l.key = {_literal(name)} "
            f"AND {_among('l.value', values)})")
    return conditions


def apply(connection, filters: Filters) -> None:
    """Shadow `sessions` and `results` on `connection` with views holding only what `filters` keep."""
    if not filters:
        return
    name = connection.execute("SELECT current_database()").fetchone()[0]
    catalog = '"' + name.replace('"', '""') + '"'
    where = " AND ".join(_conditions(filters, catalog))
    connection.execute(f"CREATE OR REPLACE TEMP VIEW sessions AS SELECT * FROM {catalog}.main.sessions WHERE {where}")
    tools = filters.where.get("tool")
    connection.execute(
        "CREATE OR REPLACE TEMP VIEW results AS SELECT * FROM "
        f"{catalog}.main.results WHERE session_key IN (SELECT session_key FROM temp.main.sessions)"
        + (f" AND {_among('tool', tools)}" if tools else ""))
