"""`doctor scan --query` and the databases `doctor scan` answers from (issue 22, item 9), through the CLI.

On main a query ran on the scan's own connection inside a "read-only" transaction: `COPY … TO` wrote
a file, `read_text` returned any local file, `INSTALL httpfs` reached for the network, and with PATHs
given the connection was writable, so `ROLLBACK; DELETE FROM sessions; ATTACH …` ran. A database
someone sent, whose `sessions` was a view over `read_text(…)`, put a local file's content into the
ranked answers. Now the answers read on a read-only connection with no file, network or extension
access and a locked configuration, a query is one SELECT, and a database holding views or macros (or
a table not as doctor makes it) is refused, each with one line and exit 5.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from tests.security.writes_support import run_doctor

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "tests" / "recordings" / "qwen" / "errors" / "session.jsonl"
REFUSED = 5
SECRET = "SECRET-MARKER-5c1e"


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("scanned")
    home = folder / "home"
    home.mkdir()
    db = folder / "t.duckdb"
    done = run_doctor(home, "scan", "--db", str(db), "--jobs", "1", str(SESSION), timeout=120)
    assert done.returncode == 0, done.stderr
    return db


@pytest.fixture
def db(scanned, tmp_path) -> Path:
    copy = tmp_path / "t.duckdb"
    shutil.copy(scanned, copy)
    return copy


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "private.txt"
    path.write_text(f"{SECRET}\n")
    return path


def _refused(done, why: str) -> None:
    assert done.returncode == REFUSED, (done.returncode, done.stdout[-500:], done.stderr)
    assert done.stderr.count("\n") == 1 and why in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and SECRET not in done.stdout + done.stderr


def _sessions(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute("SELECT count(*) FROM sessions").fetchone()[0]


def test_copy_to_a_file_is_refused_and_writes_nothing(home, db, tmp_path):
    target = tmp_path / "written.csv"
    done = run_doctor(home, "scan", "--db", str(db), "--query", f"COPY sessions TO '{target}'")
    _refused(done, "--query refused: a SELECT only (COPY given)")
    assert not target.exists()
    done = run_doctor(home, "scan", "--db", str(db), "--query",
                      f"SELECT * FROM sessions, (SELECT 1 FROM (COPY sessions TO '{target}'))")
    assert done.returncode in (2, REFUSED) and not target.exists()


@pytest.mark.parametrize("reader", ["read_text", "read_blob", "read_csv"])
def test_reading_a_local_file_is_refused(home, db, secret, reader):
    done = run_doctor(home, "scan", "--db", str(db), "--query", f"SELECT * FROM {reader}('{secret}')")
    _refused(done, "file system operations are disabled")


def test_installing_or_loading_an_extension_is_refused(home, db):
    _refused(run_doctor(home, "scan", "--db", str(db), "--query", "INSTALL httpfs"), "a SELECT only")
    _refused(run_doctor(home, "scan", "--db", str(db), "--query", "LOAD httpfs"), "a SELECT only")
    done = run_doctor(home, "scan", "--db", str(db), "--query", "SELECT * FROM read_csv('https://127.0.0.1:9/x.csv')")
    _refused(done, "--query refused")


def test_the_configuration_cannot_be_unlocked(home, db, secret):
    done = run_doctor(home, "scan", "--db", str(db), "--query", "SET enable_external_access = true")
    _refused(done, "a SELECT only")
    done = run_doctor(home, "scan", "--db", str(db), "--query",
                      f"SELECT * FROM (SELECT set_config('enable_external_access', 'true')), read_text('{secret}')")
    assert done.returncode in (2, REFUSED) and SECRET not in done.stdout


def test_with_paths_a_query_still_cannot_write_or_attach(home, db, tmp_path):
    attached = tmp_path / "attached.duckdb"
    before = _sessions(db)
    done = run_doctor(home, "scan", "--db", str(db), "--jobs", "1", str(SESSION), "--query",
                      f"ROLLBACK; DELETE FROM sessions; ATTACH '{attached}'", timeout=120)
    _refused(done, "--query refused: one statement only (3 given)")
    assert _sessions(db) == before and not attached.exists()
    done = run_doctor(home, "scan", "--db", str(db), "--jobs", "1", str(SESSION), "--query",
                      "DELETE FROM sessions", timeout=120)
    _refused(done, "--query refused: a SELECT only (DELETE given)")
    done = run_doctor(home, "scan", "--db", str(db), "--jobs", "1", str(SESSION), "--query",
                      f"SELECT * FROM sessions, (ATTACH '{attached}')", timeout=120)
    assert done.returncode in (2, REFUSED)
    assert _sessions(db) == before and not attached.exists()


def test_a_legitimate_query_still_answers(home, db):
    done = run_doctor(home, "scan", "--db", str(db), "--query", "SELECT agent, count(*) AS n FROM sessions GROUP BY agent")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["agent\tn", f"qwen\t{_sessions(db)}"]


def _tamper(db: Path, *statements: str) -> None:
    with duckdb.connect(str(db)) as connection:
        for statement in statements:
            connection.execute(statement)


def test_a_sent_database_whose_sessions_is_a_view_over_a_file_is_refused(home, db, secret):
    _tamper(db, "ALTER TABLE sessions RENAME TO sessions_data",
            f"CREATE VIEW sessions AS SELECT * REPLACE ((SELECT content FROM read_text('{secret}')) AS path) "
            "FROM sessions_data")
    for extra in ([], ["--format", "json"], ["--query", "SELECT path FROM sessions"]):
        _refused(run_doctor(home, "scan", "--db", str(db), *extra), "refused: it holds a view ('sessions')")
    done = run_doctor(home, "scan", "--db", str(db), "--jobs", "1", str(SESSION), timeout=120)
    _refused(done, "refused: it holds a view ('sessions')")


def test_a_sent_database_with_a_macro_is_refused(home, db, secret):
    _tamper(db, f"CREATE MACRO secret() AS TABLE SELECT content FROM read_text('{secret}')")
    _refused(run_doctor(home, "scan", "--db", str(db)), "refused: it holds a macro ('secret')")


def test_a_sent_database_with_a_table_unlike_doctors_is_refused(home, db):
    _tamper(db, "ALTER TABLE sessions ADD COLUMN note VARCHAR DEFAULT 'x'")
    _refused(run_doctor(home, "scan", "--db", str(db)), "refused: its table sessions is not as doctor makes it")
