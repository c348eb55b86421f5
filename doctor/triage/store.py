"""The embedded triage database (DuckDB): opening it safely, and group commits of finished files.

Only the main process writes, so a worker never holds the file open. DuckDB locks
the file for its writer: a second scan on the same database fails at once with a
clear message rather than waiting forever. Finished files are committed in groups
(`write_group`), one transaction for several files: DuckDB's fixed cost per
statement and per commit (~3 ms a file when each file had its own) is paid once per
group. Each file is all or nothing all the same: its rows are in the group's
transaction or not at all, and the `files` table, written in the same transaction,
says which files are committed; a killed scan loses at most the open group, which the
next scan finds unchanged-but-missing and reads again.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from doctor.report.inert import inert_line
from doctor.triage import replay_inputs
from doctor.triage.fingerprint import Fingerprint
from doctor.triage.rows import FILE_TYPES, GONE, OK, RESULT_TYPES, SESSION_TYPES, FileOutcome, storable
from doctor.triage.schema import SCHEMA_VERSION, TABLES, arrow_columns, arrow_table, define_views


class StoreError(Exception):
    """The database cannot be used: busy, from another schema version, or not a database."""


class Refused(StoreError):
    """A database doctor did not make as it is: it holds views or macros, or a table not as doctor's schema
    has it. Its `sessions` could be a view over `read_text('/etc/shadow')`: it is never read."""


# The answers (report, --query, Fleet, metrics, Parquet) read the database on a connection of their own:
# read-only, with no access to files, the network or extensions, and the configuration locked so that no
# statement can turn that back on. The database may be one a stranger sent.
ANSWERING = {"enable_external_access": False, "autoinstall_known_extensions": False,
             "autoload_known_extensions": False, "lock_configuration": True}


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


def _named(name: str) -> str:
    return repr(name[:40])


@functools.cache
def _reference_tables() -> dict[str, str]:
    """Each table's statement as this DuckDB states it for doctor's schema (a fresh database in memory)."""
    with duckdb.connect(config={"enable_external_access": False}) as reference:
        for ddl in (*TABLES.values(), *replay_inputs.TABLES.values()):
            reference.execute(ddl)
        return dict(reference.execute("SELECT table_name, sql FROM duckdb_tables()").fetchall())


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


@dataclass(frozen=True)
class KnownFile:
    """What the `files` table holds of a file an earlier scan saw."""

    fingerprint: Fingerprint | None
    status: str
    archive_key: str | None
    shown: str
    folder_keys: str | None


@dataclass(frozen=True)
class FileWrite:
    """One finished file for `write_group`: its outcome and the `files` row's facts."""

    outcome: FileOutcome
    fingerprint: Fingerprint | None = None
    archive_key: str | None = None
    folder_keys: str | None = None
    fresh: bool = False  # the database holds no row of this file: nothing to delete first


_FILE_COLUMNS = tuple(FILE_TYPES)
_RESULT_TABLE = {"session_key": "VARCHAR NOT NULL", **RESULT_TYPES}
_CUT = {"session_key": "VARCHAR", "first_new": "BIGINT"}


def _result_columns(sessions: list[FileOutcome]) -> list[list]:
    """The group's result rows as the results table's columns: each file's columns one after the other,
    behind a session_key column."""
    keys: list[str] = []
    columns: list[list] = [[] for _ in RESULT_TYPES]
    for outcome in sessions:
        keys.extend([outcome.key] * len(outcome.results))
        for column, values in zip(columns, outcome.results.columns):
            column.extend(values)
    return [keys, *columns]


class Store:
    """The database: writable for a scan (doctor's own statements only), or read-only for the answers."""

    def __init__(self, path: Path, *, read_only: bool = False):
        self.path = Path(path)
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = duckdb.connect(str(self.path), read_only=read_only, config=ANSWERING if read_only else {})
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreError(f"{self.path}: the database is in use by another doctor scan; "
                                 "wait for it to finish (or pass another --db)") from None
            raise StoreError(f"{self.path}: cannot open the database ({text.splitlines()[0]})") from None
        except duckdb.Error as exc:
            raise StoreError(f"{self.path}: not a triage database ({str(exc).splitlines()[0]})") from None
        try:
            self._check_schema(read_only)
        except BaseException:
            self.db.close()  # a refused database is not left open (the answers then open their own)
            raise
        if not read_only:
            replay_inputs.ensure_tables(self.db)  # additive: a database from before them gains them
        define_views(self.db)

    def close(self) -> None:
        self.db.close()

    def _check_schema(self, read_only: bool) -> None:
        tables = self._doctors_tables()
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
            version = inert_line(found[0]) if found else "unknown"
            raise StoreError(f"{self.path}: triage database schema {version}; this doctor uses schema "
                             f"{SCHEMA_VERSION} (scan into a new --db)")

    def _doctors_tables(self) -> set[str]:
        """The names of the database's tables, once it is known to hold nothing but doctor's tables as
        doctor makes them: no view, no macro, and each of doctor's tables created by exactly the statement
        doctor would use (no generated column, default or check that runs an expression). Nothing of the
        database's contents is read before that (its `meta` could be a view too)."""
        db = self.db
        views = [row[0] for row in db.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal "
                                               "AND database_name = current_database()").fetchall()]
        macros = [row[0] for row in db.execute("SELECT function_name FROM duckdb_functions() WHERE NOT internal "
                                               "AND function_type IN ('macro', 'table_macro')").fetchall()]
        if views or macros:
            kind, name = ("view", views[0]) if views else ("macro", macros[0])
            raise Refused(f"{self.path}: refused: it holds a {kind} ({_named(name)}); a triage database "
                          "doctor made holds tables only")
        found = dict(db.execute("SELECT table_name, sql FROM duckdb_tables() "
                                "WHERE database_name = current_database() AND schema_name = 'main'").fetchall())
        for name, sql in _reference_tables().items():
            if name in found and found[name] != sql:
                raise Refused(f"{self.path}: refused: its table {name} is not as doctor makes it")
        return set(found)

    # -- what earlier scans saw

    def known_files(self) -> dict[str, KnownFile]:
        """file_key -> what the `files` table holds, for every file scanned before."""
        rows = self.db.execute(
            "SELECT file_key, size, mtime_ns, ctime_ns, inode, head_len, head_digest, tail_len, tail_digest, status, "
            "archive_key, path, folder_keys FROM files").fetchall()
        known = {}
        for key, size, mtime, ctime, inode, head_len, head, tail_len, tail, status, archive, shown, folders in rows:
            fp = Fingerprint(size, mtime, ctime, inode, head_len, head, tail_len, tail) if size is not None else None
            known[key] = KnownFile(fp, status, archive, shown, folders)
        return known

    def files_without_replay(self) -> frozenset[str]:
        """The files whose session has no replay inputs stored (an archive for any of its members): a scan
        with --replay reads them again though they are unchanged. Pasted reports have none to store."""
        rows = self.db.execute("""
            SELECT DISTINCT coalesce(f.archive_key, f.file_key) FROM files f JOIN sessions s ON s.session_key = f.file_key
            WHERE s.source = 'session' AND f.status <> 'gone'
              AND s.session_key NOT IN (SELECT session_key FROM replay_sessions)""").fetchall()
        return frozenset(key for (key,) in rows)

    def stored_results(self, key: str) -> tuple[int, str | None]:
        """(rows stored, their digest) for a session; (0, None) when there is none."""
        found = self.db.execute(
            "SELECT (SELECT count(*) FROM results WHERE session_key = $1), "
            "(SELECT results_digest FROM sessions WHERE session_key = $1)", [key]).fetchone()
        return (found[0], found[1]) if found and found[1] is not None else (0, None)

    # -- writing

    def begin_scan(self, engine: str) -> int:
        """The new scan's id. Until `finish_scan`, DuckDB runs on one thread: a group's transaction is a
        handful of statements, and its worker threads only competed with the scan's own workers for
        the cores."""
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
             counts.get("unchanged", 0) + counts.get("replayed", 0),  # read again for --replay, yet unchanged
             counts.get("skipped", 0), counts.get("results_written", 0), interrupted,
             scan_id])
        self.db.execute("RESET threads")  # the answers' queries that follow use every core

    def write_group(self, files: list[FileWrite], scan_id: int) -> int:
        """Several finished files in one transaction (each file's rows all there or none); returns the
        result rows written. One statement per table for the whole group: the stale rows of files seen
        before go first (all of a replaced session's results, or a grown one's from its first new row),
        then the new sessions, results and files rows, each as one Arrow table; each session's replay inputs
        (replay_inputs) are its own few statements."""
        sessions = [write.outcome for write in files if write.outcome.status == OK]
        stale = [write.outcome for write in files if not write.fresh]
        db = self.db
        db.execute("BEGIN")
        try:
            if stale:
                cut = arrow_table(_CUT, [(o.key, o.first_new if o.status == OK else 0) for o in stale])  # noqa: F841
                db.execute("DELETE FROM results USING cut WHERE results.session_key = cut.session_key "
                           "AND results.ordinal >= cut.first_new")
                db.execute("DELETE FROM sessions WHERE session_key IN (SELECT session_key FROM cut)")
                db.execute("DELETE FROM files WHERE file_key IN (SELECT session_key FROM cut)")
                replay_inputs.forget_many(db, [o.key for o in stale])  # a session's replay rows are rewritten whole
            if sessions:
                # each session row is in SESSION_COLUMNS order, storable (rows.finish); DuckDB reads the
                # local variables by name
                new_sessions = arrow_table(SESSION_TYPES, [tuple(o.session.values()) for o in sessions])  # noqa: F841
                db.execute("INSERT INTO sessions BY NAME SELECT * FROM new_sessions")
                if any(len(o.results) for o in sessions):
                    new_results = arrow_columns(_RESULT_TABLE, _result_columns(sessions))  # noqa: F841
                    db.execute("INSERT INTO results BY NAME SELECT * FROM new_results")
                replay_inputs.write_group(db, [(o.key, o.replay) for o in sessions])
            new_files = arrow_table(FILE_TYPES, [  # noqa: F841
                self._file_row(w.outcome.key, w.outcome.shown, w.fingerprint, w.outcome.status, w.outcome.reason,
                               scan_id, w.archive_key, w.folder_keys) for w in files])
            db.execute("INSERT INTO files BY NAME SELECT * FROM new_files")
            db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)
        return sum(len(o.results) for o in sessions)

    def write_archive(self, key: str, shown: str, fp: Fingerprint | None, status: str, reason: str | None,
                      scan_id: int, folder_keys: str | None = None) -> None:
        """An archive's own row; its old members are dropped (they are scanned again, one by one)."""
        db = self.db
        db.execute("BEGIN")
        try:
            members = [row[0] for row in db.execute("SELECT file_key FROM files WHERE archive_key = ?", [key]).fetchall()]
            for member in members:
                self._forget(member)
                db.execute("DELETE FROM files WHERE file_key = ?", [member])
            db.execute("DELETE FROM files WHERE file_key = ?", [key])
            db.execute(f"INSERT INTO files ({', '.join(_FILE_COLUMNS)}) VALUES ({', '.join('?' for _ in _FILE_COLUMNS)})",
                       list(self._file_row(key, shown, fp, status, reason, scan_id, None, folder_keys)))
            db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)

    def mark_gone(self, keys: list[str], scan_id: int) -> int:
        """Files earlier scans saw in a folder this scan walked, no longer there (and an archive's
        members with it): marked gone, so they leave the answers; `prune` deletes them."""
        if not keys:
            return 0
        gone = arrow_table({"file_key": "VARCHAR"}, [(key,) for key in keys])  # noqa: F841
        db = self.db
        db.execute("BEGIN")
        try:
            db.execute("UPDATE files SET status = ?, reason = 'not there any more', scan_id = ? "
                       "WHERE status <> ? AND (file_key IN (SELECT file_key FROM gone) "
                       "OR archive_key IN (SELECT file_key FROM gone))", [GONE, scan_id, GONE])
            db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)
        return len(keys)

    def prune(self) -> int:
        """Delete every file marked gone, with its session and result rows; returns how many files."""
        db = self.db
        db.execute("BEGIN")
        try:
            count = db.execute("SELECT count(*) FROM files WHERE status = ?", [GONE]).fetchone()[0]
            gone = "(SELECT file_key FROM files WHERE status = 'gone')"
            db.execute(f"DELETE FROM results WHERE session_key IN {gone}")
            db.execute(f"DELETE FROM sessions WHERE session_key IN {gone}")
            db.execute("DELETE FROM files WHERE status = ?", [GONE])
            db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)
        return count

    def restyle(self, paths: list[tuple[str, str]]) -> None:
        """Store unchanged files' paths as this scan's --paths shows them (file key, path)."""
        if not paths:
            return
        restyled = arrow_table({"file_key": "VARCHAR", "path": "VARCHAR"}, paths)  # noqa: F841
        db = self.db
        db.execute("BEGIN")
        try:
            db.execute("UPDATE files SET path = restyled.path FROM restyled WHERE files.file_key = restyled.file_key")
            db.execute("UPDATE sessions SET path = restyled.path FROM restyled "
                       "WHERE sessions.session_key = restyled.file_key")
            db.execute("COMMIT")
        except BaseException as exc:
            self._rollback(exc)

    def _rollback(self, exc: BaseException):
        """Undo the transaction and re-raise (a Ctrl-C inside DuckDB as KeyboardInterrupt)."""
        try:
            self.db.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the failed statement already ended the transaction
        if _interrupted(exc) or (isinstance(exc, duckdb.CatalogException) and "new_" in str(exc)):
            raise KeyboardInterrupt from None  # a Ctrl-C while DuckDB looked up the Arrow table's variable
        raise exc

    def _forget(self, key: str) -> None:
        replay_inputs.forget(self.db, key)
        self.db.execute("DELETE FROM results WHERE session_key = ?", [key])
        self.db.execute("DELETE FROM sessions WHERE session_key = ?", [key])

    @staticmethod
    def _file_row(key, shown, fp, status, reason, scan_id, archive_key, folder_keys) -> tuple:
        """A `files` row in FILE_TYPES order."""
        facts = ([fp.size, fp.mtime_ns, fp.ctime_ns, fp.inode, fp.head_len, fp.head_digest, fp.tail_len,
                  fp.tail_digest] if fp else [None] * 8)
        return (key, storable(shown), archive_key, folder_keys, *facts, status, storable(reason), scan_id)
