"""`doctor scan` as separate processes see it: the worker pool, a second scan on a busy database,
and `doctor memory` importing nothing of the triage or mcp extras."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from triage_support import QWEN_SESSIONS, RECORDINGS, ROOT, table

HEAVY = ("duckdb", "pyarrow", "dask", "distributed", "opentelemetry", "mcp")  # the [triage] and [mcp] extras


def _doctor(*args, env=None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=env or os.environ, timeout=300, **kwargs)


def test_doctor_memory_imports_none_of_the_optional_extras() -> None:
    session = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"
    probe = ("import sys; from doctor.cli import main; code = main(['memory', %r, '--json', '--results']); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in %r or m.startswith('doctor.triage')))"
             % (str(session), HEAVY))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("missing", ["duckdb", "pyarrow"])
def test_a_missing_extra_is_one_line_naming_it(tmp_path: Path, missing: str) -> None:
    db = tmp_path / "t.duckdb"
    probe = ("import sys; sys.modules[%r] = None; from doctor.cli import main; sys.exit(main(['scan', '--db', %r, %r]))"
             % (missing, str(db), str(RECORDINGS / "qwen" / "errors" / "session.jsonl")))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "pip install 'doctor-memory[triage]'" in done.stderr and f"({missing} is missing)" in done.stderr
    assert not db.exists()


def test_the_process_pool_gives_the_single_process_database(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("QWEN_HOME", None)
    pooled, single = tmp_path / "pooled.duckdb", tmp_path / "single.duckdb"
    assert _doctor("scan", "--db", pooled, "--jobs", "2", RECORDINGS / "qwen", env=env).returncode == 0
    assert _doctor("scan", "--db", single, "--jobs", "1", RECORDINGS / "qwen", env=env).returncode == 0
    for name in ("sessions", "results", "files"):
        columns = "* EXCLUDE (scan_id)" if name == "files" else "*"
        assert table(pooled, f"SELECT {columns} FROM {name} ORDER BY ALL") == \
            table(single, f"SELECT {columns} FROM {name} ORDER BY ALL")
    assert table(pooled, "SELECT count(*) FROM sessions WHERE agent = 'qwen'")[0][0] == QWEN_SESSIONS


def test_a_second_scan_on_a_busy_database_fails_clearly(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    session = RECORDINGS / "qwen" / "errors" / "session.jsonl"
    assert _doctor("scan", "--db", db, session).returncode == 0
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(60)", str(db)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        done = _doctor("scan", "--db", db, session)
        assert done.returncode == 2
        assert "in use by another doctor scan" in done.stderr and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
@pytest.mark.ci
def test_ctrl_c_leaves_a_consistent_database(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) mid-scan: exit 130, one line,
    every session written is complete, the scan is marked interrupted, and a re-scan finishes the job."""
    import shutil
    import signal
    import time

    corpus = tmp_path / "corpus"
    for copy in range(25):
        for folder in (RECORDINGS / "qwen").iterdir():
            if (folder / "session.jsonl").is_file():
                target = corpus / f"{copy}-{folder.name}"
                target.mkdir(parents=True)
                shutil.copy(folder / "session.jsonl", target / "session.jsonl")
    env = {**os.environ, "HOME": str(tmp_path)}
    db = tmp_path / "t.duckdb"
    scan = subprocess.Popen([sys.executable, "-m", "doctor.cli", "scan", "--db", str(db), "--jobs", "2", str(corpus)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    wal = db.with_name(db.name + ".wal")  # the tables and the scans row take ~3.5 KB; each file adds more
    while time.monotonic() < deadline and not (wal.exists() and wal.stat().st_size > 8192):
        time.sleep(0.02)
    os.killpg(scan.pid, signal.SIGINT)
    out, err = scan.communicate(timeout=120)
    assert scan.returncode == 130, (out, err)
    assert err.count("\n") == 1 and "interrupted" in err and "Traceback" not in err
    sessions = table(db, "SELECT count(*) FROM sessions")[0][0]
    assert 0 < sessions < 25 * QWEN_SESSIONS, "stopped part way"
    assert table(db, "SELECT count(*) FROM sessions s WHERE tool_results <> "
                     "(SELECT count(*) FROM results r WHERE r.session_key = s.session_key)")[0][0] == 0
    assert table(db, "SELECT interrupted FROM scans") == [(True,)]
    done = _doctor("scan", "--db", db, "--jobs", "2", corpus, env=env)
    assert done.returncode == 0, done.stderr
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == 25 * QWEN_SESSIONS
    assert f"{sessions:,} unchanged" in done.stdout


@pytest.mark.slow
@pytest.mark.ci
def test_ctrl_c_while_the_scan_starts_is_never_a_traceback(tmp_path: Path) -> None:
    """Ctrl-C in the first moments (the database opening, the plan, the pool's forkserver importing
    doctor): exit 130 with at most its one line (or, when the Ctrl-C fell in the pool's start-up,
    which ignores it, the scan finishes), never a traceback or an internal error, and the database
    stays consistent."""
    import signal
    import time

    env = {**os.environ, "HOME": str(tmp_path)}
    for delay in (0.0, 0.0, 0.02, 0.05, 0.08, 0.12, 0.2):
        db = tmp_path / f"t{delay}.duckdb"
        wal = db.with_name(db.name + ".wal")
        scan = subprocess.Popen([sys.executable, "-m", "doctor.cli", "scan", "--db", str(db), "--jobs", "2",
                                 str(RECORDINGS / "qwen")], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        while not wal.exists() and scan.poll() is None:
            time.sleep(0.002)
        time.sleep(delay)
        os.killpg(scan.pid, signal.SIGINT)
        _, err = scan.communicate(timeout=120)
        assert "Traceback" not in err and "internal error" not in err, (delay, err)
        assert scan.returncode in (130, 0), (delay, scan.returncode, err)  # the qwen folder: nothing skipped
        if scan.returncode == 130 and err:  # said once the scan runs; before, or while answering, exit 130 alone
            assert err.count("\n") == 1 and "interrupted" in err, (delay, err)
        if db.exists():
            assert table(db, "SELECT count(*) FROM sessions s WHERE tool_results <> "
                             "(SELECT count(*) FROM results r WHERE r.session_key = s.session_key)")[0][0] == 0


@pytest.mark.parametrize("make", [
    lambda duckdb: duckdb.InvalidInputException(
        "Python Object new_results: conversion of the Python object 'new_results' as Arrow data failed: "
        "KeyboardInterrupt: "),
    lambda duckdb: duckdb.InterruptException("INTERRUPT Error: Interrupted!"),
    lambda duckdb: RuntimeError("Query interrupted"),
])
def test_every_form_duckdb_gives_a_ctrl_c_is_the_interrupt(make) -> None:
    """A Ctrl-C can land while DuckDB converts the results table to Arrow: DuckDB then raises its own
    error carrying the KeyboardInterrupt in its message (CI saw exit 4, 'internal error', instead of 130)."""
    duckdb = pytest.importorskip("duckdb")
    from doctor.triage.store import ctrl_c_as_interrupt

    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_as_interrupt():
            raise make(duckdb)


def test_a_real_duckdb_error_is_not_taken_for_a_ctrl_c() -> None:
    duckdb = pytest.importorskip("duckdb")
    from doctor.triage.store import ctrl_c_as_interrupt

    with pytest.raises(duckdb.CatalogException):
        with ctrl_c_as_interrupt():
            raise duckdb.CatalogException("Table with name nope does not exist!")


def test_workers_started_for_a_plan_that_never_ran_end_with_the_engine() -> None:
    """The scan starts its workers while it still plans (LocalPool.prepare); a scan stopped or failed before
    its jobs ran must not leave them behind when the engine closes."""
    import psutil

    from doctor.triage.engines import LocalPool

    me = psutil.Process()
    before = {child.pid for child in me.children(recursive=True)}
    pool = LocalPool(2)
    pool.prepare()
    pool.prepare()  # once is enough
    # the workers are the forkserver's children (the forkserver and the resource tracker are this process's)
    workers = [child for child in me.children(recursive=True) if child.pid not in before and child.ppid() != me.pid]
    assert len(workers) == 2
    pool.close()
    assert [worker for worker in workers if worker.is_running() and worker.status() != psutil.STATUS_ZOMBIE] == []
