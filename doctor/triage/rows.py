"""The rows one scanned file yields, as plain picklable data (they cross process and Dask boundaries).

Column names, order and SQL types here are the database's (`schema` makes its tables from
them); a job fills them, the store writes them, nothing in between renames them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import orjson

from doctor.core.budgets import is_mcp_tool_name
from doctor.core.sentinels import LAYERS

LAYER_COLUMNS = tuple("layer_" + re.sub(r"[^a-z0-9]+", "_", layer).strip("_") for layer in LAYERS)

# Each table's columns in order, with their SQL types. The results table's come after its session_key;
# the Arrow batches written to it take the same types.
RESULT_TYPES = {
    "ordinal": "BIGINT NOT NULL",
    "turn": "BIGINT NOT NULL",
    "tool": "VARCHAR NOT NULL",
    "tool_type": "VARCHAR NOT NULL",
    "raw_chars": "BIGINT NOT NULL",
    "injected_chars": "DOUBLE NOT NULL",
    "tokens": "BIGINT NOT NULL",
    "budget_chars": "DOUBLE",
    "budget_source": "VARCHAR",
    "layer": "VARCHAR NOT NULL",
    "oversized": "BOOLEAN NOT NULL",
    "error": "BOOLEAN NOT NULL",
    "declared_chars": "BIGINT",
    "declared_kb": "BIGINT",
}
SESSION_TYPES = {
    "session_key": "VARCHAR PRIMARY KEY",
    "path": "VARCHAR NOT NULL",
    "source": "VARCHAR NOT NULL",
    "agent": "VARCHAR",
    "agent_version": "VARCHAR",
    "format": "VARCHAR",
    "session_id": "VARCHAR",
    "project_hash": "VARCHAR",
    "started": "TIMESTAMP",  # UTC (rows.started_at); NULL when the session states none
    "turns": "BIGINT",
    "size_bytes": "BIGINT",
    "records": "BIGINT",
    "tool_results": "BIGINT",
    "retained_chars": "DOUBLE",
    "retained_tokens": "BIGINT",
    # The model's context window where the session states it (doctor.core.context_window: a Codex rollout),
    # and the share of it the tool results hold, in the agent's own measure (`doctor memory`'s contextWindow).
    "context_window_tokens": "BIGINT",
    "context_window_share": "DOUBLE",
    "largest_chars": "DOUBLE",
    "oversized": "BIGINT",
    **{column: "BIGINT NOT NULL" for column in LAYER_COLUMNS},
    "side_channel_chars": "BIGINT NOT NULL",
    "side_channel_copies": "BIGINT NOT NULL",
    "spill_findings": "BIGINT",
    "input_problems": "BIGINT NOT NULL",
    "retention_unavailable": "VARCHAR",
    "results_complete": "BOOLEAN NOT NULL",
    "results_digest": "VARCHAR NOT NULL",
}
FILE_TYPES = {
    "file_key": "VARCHAR PRIMARY KEY",
    "path": "VARCHAR NOT NULL",
    "archive_key": "VARCHAR",
    "folder_keys": "VARCHAR",
    "size": "BIGINT",
    "mtime_ns": "BIGINT",
    "ctime_ns": "BIGINT",
    "inode": "BIGINT",
    "head_len": "BIGINT",
    "head_digest": "VARCHAR",
    "tail_len": "BIGINT",
    "tail_digest": "VARCHAR",
    "status": "VARCHAR NOT NULL",
    "reason": "VARCHAR",
    "scan_id": "BIGINT NOT NULL",
}
SESSION_COLUMNS = tuple(SESSION_TYPES)
RESULT_COLUMNS = tuple(RESULT_TYPES)

OK, SKIPPED, ARCHIVE, GONE = "ok", "skipped", "archive", "gone"
# A file found in a folder that no reader recognises (an agent's settings, a subagent's `.meta.json`, notes):
# recorded and listed with --skipped, but not a problem of the scan (a file named on the command line is).
NOT_SESSION = "not-session"


@dataclass(frozen=True)
class FileJob:
    """One file to scan: a session file, a pasted JSON report, or a member of an archive."""

    key: str  # stable id of the file (digest of its absolute path, and member)
    path: str  # the file to open (a member's unpacked copy, for a member)
    shown: str  # the path as the database stores it (--paths)
    member: str | None = None
    options: object = None  # assemble.ReportOptions
    known_results: int = 0  # rows already stored for a file that grew by appends
    known_digest: str | None = None  # digest of those rows
    size: int = 0  # bytes to read, to group jobs into tasks of similar cost
    replay: bool = False  # also make the replay inputs (`doctor scan --replay`)


@dataclass
class FileOutcome:
    """What a job found: a session row and its result rows, or the reason the file was skipped."""

    key: str
    shown: str
    status: str
    reason: str | None = None
    session: dict | None = None  # SESSION_COLUMNS -> value, in that order
    results: ResultBatch = field(default_factory=lambda: ResultBatch.from_rows([]))  # rows with ordinal >= first_new
    first_new: int = 0  # 0: replace the session's rows; K > 0: keep the K stored rows, append these
    replay: object = None  # replay_inputs.ReplayRows: what `doctor scan --whatif` needs of the session


@dataclass(slots=True)
class ResultBatch:
    """A file's result rows column by column, in RESULT_COLUMNS order (entry i of each list is row i): so
    they cross to the main process as a few lists, not a tuple per row, and reach DuckDB as Arrow columns
    without being taken apart again. Every string in them is `storable`."""

    columns: list[list]

    @classmethod
    def from_rows(cls, rows: list[tuple]) -> ResultBatch:
        return cls([list(values) for values in zip(*rows)] if rows else [[] for _ in RESULT_COLUMNS])

    def __len__(self) -> int:
        return len(self.columns[0])

    def since(self, first: int) -> ResultBatch:
        """The rows from the `first`-th on."""
        return ResultBatch([values[first:] for values in self.columns]) if first else self

    def digest(self, count: int | None = None) -> str:
        """A digest of the first `count` rows (all by default): equal digests of a prefix mean the rows
        stored for it still hold. NaN and infinities digest as JSON null: no figure stored is either."""
        shown = self.columns if count is None else [values[:count] for values in self.columns]
        return hashlib.blake2b(orjson.dumps(shown), digest_size=16).hexdigest()


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(value):
    """`value` as the database can hold it: DuckDB stores valid UTF-8 only, so each lone surrogate
    in a string (JSON's "\\ud800" escape, a file name that is not UTF-8) becomes U+FFFD. One such
    string in a hostile session used to stop the whole scan."""
    if type(value) is str and not value.isascii():
        return _SURROGATE.sub("\ufffd", value)
    return value


def started_at(text) -> datetime | None:
    """A session's start as naive UTC, from the ISO 8601 text its agent recorded (no zone: UTC), so
    `--since/--until` compare instants, not strings; None when the text is not such a time (an odd or
    hostile value leaves the session out of time filters, it is never guessed)."""
    if not isinstance(text, str) or not 10 <= len(text) <= 64:
        return None
    try:
        moment = datetime.fromisoformat(text)
        return moment.astimezone(timezone.utc).replace(tzinfo=None) if moment.tzinfo is not None else moment
    except (ValueError, OverflowError):
        return None


def tool_type(name: str, budget_source: str) -> str:
    return "mcp" if budget_source == "mcp" or is_mcp_tool_name(name) else "built-in"


def finish(job: FileJob, session_row: dict, results: ResultBatch) -> FileOutcome:
    """The outcome with the rows' digest, keeping only new rows when the stored prefix still holds; the
    session row in SESSION_COLUMNS order, each value `storable` (so the main process only passes it on)."""
    first_new = 0
    if job.known_results and len(results) >= job.known_results and results.digest(job.known_results) == job.known_digest:
        first_new = job.known_results
    session_row["results_digest"] = results.digest()
    stored = {column: storable(session_row[column]) for column in SESSION_COLUMNS}
    return FileOutcome(job.key, job.shown, OK, session=stored, results=results.since(first_new),
                       first_new=first_new)
