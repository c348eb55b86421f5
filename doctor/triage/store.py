"""The embedded triage database (DuckDB): opening it safely, and one transaction per scanned file.

Only the main process writes, so a worker never holds the file open. DuckDB locks
the file for its writer: a second scan on the same database fails at once with a
clear message rather than waiting forever. Each file's rows are replaced (or, for a
session that grew by appends, extended) in one transaction, so an interrupted scan
leaves every file either as it was or fully updated.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from doctor.triage.fingerprint import Fingerprint
from doctor.triage.rows import OK, SESSION_COLUMNS, FileOutcome, storable
from doctor.triage.schema import SCHEMA_VERSION, TABLES, arrow_results


class StoreError(Exception):
    """The database cannot be used: busy, from another schema version, or not a database."""


def _interrupted(exc: BaseException) -> bool:
    """DuckDB turns a Ctrl-C that lands inside a statement into its own error: its interrupt error, a
    RuntimeError saying "interrupted", or, when the Ctrl-C lands while it converts a Python object to Arrow,
    an error that carries the KeyboardInterrupt in its message."""
    if isinstance(exc, duckdb.InterruptException):
        return True
    text = str(exc)
    return isinstance(exc, (RuntimeError, duckdb.Error)) and (
        "interrupted" in text.lower() or "KeyboardInterrupt" in text)


@contextlib.contextmanager
def ctrl_c_as_interrupt():
    """A Ctrl-C that lands inside a DuckDB statement (DuckDB's own interrupt error) is a
    KeyboardInterrupt wherever it lands: opening the database, planning, bookkeeping, answering."""
    try:
        yield
    except (duckdb.Error, RuntimeError) as exc:
        if _interrupted(exc):
            raise KeyboardInterrupt from None
        raise


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Store:
    def __init__(self, path: Path, *, read_only: bool = False):
        self.path = Path(path)
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreError(f"{self.path}: the database is in use by another doctor scan; "
                                 "wait for it to finish (or pass another --db)") from None
            raise StoreError(f"{self.path}: cannot open the database ({text.splitlines()[0]})") from None
        except duckdb.Error as exc:
            raise StoreError(f"{self.path}: not a triage database ({str(exc).splitlines()[0]})") from None
        self._check_schema(read_only)

    def close(self) -> None:
        self.db.close()

    def _check_schema(self, read_only: bool) -> None:
        tables = {row[0] for row in self.db.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if not tables:
            if read_only:
                raise StoreError(f"{self.path}: the database is empty; run `doctor scan PATH…` first")
            self.db.execute("BEGIN")
            for ddl in TABLES.values():
                self.db.execute(ddl)
            self.db.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
            self.db.execute("COMMIT")
            return
        if "meta" not in tables:
            raise StoreError(f"{self.path}: not a doctor triage database")
        found = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if found is None or found[0] != str(SCHEMA_VERSION):
            version = found[0] if found else "unknown"
            raise StoreError(f"{self.path}: triage database schema {version}; this doctor uses schema "
                             f"{SCHEMA_VERSION} (scan into a new --db)")

    # -- what earlier scans saw

    def known_files(self) -> dict[str, tuple[Fingerprint | None, str, str | None]]:
        """file_key -> (fingerprint, status, archive_key) of every file scanned before."""
        rows = self.db.execute(
            "SELECT file_key, size, mtime_ns, head_len, head_digest, tail_len, tail_digest, status, archive_key "
            "FROM files").fetchall()
        known = {}
        for key, size, mtime, head_len, head, tail_len, tail, status, archive in rows:
            fp = Fingerprint(size, mtime, head_len, head, tail_len, tail) if size is not None else None
            known[key] = (fp, status, archive)
        return known

    def stored_results(self, key: str) -> tuple[int, str | None]:
        """(rows stored, their digest) for a session; (0, None) when there is none."""
        found = self.db.execute(
            "SELECT (SELECT count(*) FROM results WHERE session_key = $1), "
            "(SELECT results_digest FROM sessions WHERE session_key = $1)", [key]).fetchone()
        return (found[0], found[1]) if found and found[1] is not None else (0, None)

    # -- writing

    def begin_scan(self, engine: str) -> int:
        """The new scan's id. Until `finish_scan`, DuckDB runs on one thread: a file's transaction is a
        handful of small statements, and its worker threads only competed with the scan's own workers
        for the cores (a seventh of the writer's CPU time went to them)."""
        self.db.execute("SET threads = 1")
        scan_id = self.db.execute("SELECT coalesce(max(scan_id), 0) + 1 FROM scans").fetchone()[0]
        self.db.execute("INSERT INTO scans (scan_id, started_at, engine, interrupted) VALUES (?, ?, ?, true)",
                        [scan_id, _now(), engine])
        return scan_id

    def record_labels(self, scan_id: int, labels: dict[str, tuple[str, ...]], file_keys: list[str]) -> None:
        """The scan's `--label`s, on the scan and on every file it was given (one transaction; a file
        labelled before keeps its labels: the same session can belong to two tickets)."""
        if not labels:
            return
        pairs = [(key, value) for key, values in labels.items() for value in values]
        self.db.execute("BEGIN")
        try:
            self.db.executemany("INSERT OR IGNORE INTO scan_labels VALUES (?, ?, ?)",
                                [(scan_id, key, value) for key, value in pairs])
            for key, value in pairs:
                self.db.execute("INSERT OR IGNORE INTO file_labels SELECT unnest(?::VARCHAR[]), ?, ?",
                                [file_keys, key, value])
            self.db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)

    def finish_scan(self, scan_id: int, counts: dict, interrupted: bool) -> None:
        self.db.execute(
            "UPDATE scans SET finished_at = ?, files_seen = ?, files_new = ?, files_changed = ?, files_grown = ?, "
            "files_unchanged = ?, files_skipped = ?, results_written = ?, interrupted = ? WHERE scan_id = ?",
            [_now(), counts.get("seen", 0), counts.get("new", 0), counts.get("changed", 0), counts.get("grown", 0),
             counts.get("unchanged", 0), counts.get("skipped", 0), counts.get("results_written", 0), interrupted,
             scan_id])
        self.db.execute("RESET threads")  # the answers' queries that follow use every core

    def write(self, outcome: FileOutcome, fp: Fingerprint | None, scan_id: int, archive_key: str | None = None,
              *, fresh: bool = False) -> int:
        """One file's rows, in one transaction; returns how many result rows it wrote.

        `fresh`: the database holds no row of this file (the caller knows: first seen in this scan), so
        nothing is deleted or replaced; a DELETE on the results table reads all of it, and an INSERT OR
        REPLACE probes the key, which made every new file of a large scan cost more than its reading."""
        db = self.db
        db.execute("BEGIN")
        try:
            key = outcome.key
            verb = "INSERT" if fresh else "INSERT OR REPLACE"
            if outcome.status == OK:
                if not fresh:
                    db.execute("DELETE FROM results WHERE session_key = ? AND ordinal >= ?", [key, outcome.first_new])
                session = outcome.session
                db.execute(f"{verb} INTO sessions ({', '.join(SESSION_COLUMNS)}) "
                           f"VALUES ({', '.join('?' for _ in SESSION_COLUMNS)})",
                           [storable(session[column]) for column in SESSION_COLUMNS])
                self._insert_results(key, outcome.results)
            elif not fresh:
                self._forget(key)
            self._file_row(key, outcome.shown, fp, outcome.status, outcome.reason, scan_id, archive_key, verb)
            db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)
        return len(outcome.results) if outcome.status == OK else 0

    def write_archive(self, key: str, shown: str, fp: Fingerprint | None, status: str, reason: str | None,
                      scan_id: int) -> None:
        """An archive's own row; its old members are dropped (they are scanned again, one by one)."""
        db = self.db
        db.execute("BEGIN")
        try:
            members = [row[0] for row in db.execute("SELECT file_key FROM files WHERE archive_key = ?", [key]).fetchall()]
            for member in members:
                self._forget(member)
                db.execute("DELETE FROM files WHERE file_key = ?", [member])
            self._file_row(key, shown, fp, status, reason, scan_id, None)
            db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)

    def _rollback(self, exc: BaseException):
        """Undo the file's transaction and re-raise (a Ctrl-C inside DuckDB as KeyboardInterrupt)."""
        try:
            self.db.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the failed statement already ended the transaction
        if _interrupted(exc):
            raise KeyboardInterrupt from None
        raise exc

    def _forget(self, key: str) -> None:
        self.db.execute("DELETE FROM results WHERE session_key = ?", [key])
        self.db.execute("DELETE FROM sessions WHERE session_key = ?", [key])

    def _file_row(self, key, shown, fp, status, reason, scan_id, archive_key, verb="INSERT OR REPLACE") -> None:
        values = [fp.size, fp.mtime_ns, fp.head_len, fp.head_digest, fp.tail_len, fp.tail_digest] if fp else [None] * 6
        self.db.execute(f"{verb} INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [key, storable(shown), archive_key, *values, status, storable(reason), scan_id])

    def _insert_results(self, key: str, rows: list[tuple]) -> None:
        """A session's result rows as one Arrow table, which DuckDB reads column by column: half the
        time of binding each column as a list parameter (every value a DuckDB Value) and unnesting it.
        DuckDB finds the table among this frame's local variables. That lookup fails only when a Ctrl-C
        interrupts it, and DuckDB then reports the table missing: that is the interrupt."""
        if not rows:
            return
        new_results = arrow_results(key, rows)  # noqa: F841 (DuckDB reads the local variable by its name)
        try:
            self.db.execute("INSERT INTO results SELECT * FROM new_results")
        except duckdb.Error as exc:
            if _interrupted(exc) or (isinstance(exc, duckdb.CatalogException) and "new_results" in str(exc)):
                raise KeyboardInterrupt from None
            raise
