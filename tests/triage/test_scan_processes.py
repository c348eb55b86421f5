"""`doctor scan` as separate processes see it: the worker pool, a second scan on a busy database,
and `doctor memory` importing nothing of the triage extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from triage_support import RECORDINGS, ROOT, table

HEAVY = ("duckdb", "dask", "distributed", "opentelemetry")


def _doctor(*args, env=None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=env or os.environ, timeout=300, **kwargs)


def test_doctor_memory_imports_none_of_the_triage_extra() -> None:
    session = RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl"
    probe = ("import sys; from doctor.cli import main; code = main(['memory', %r, '--json', '--results']); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in %r or m.startswith('doctor.triage')))"
             % (str(session), HEAVY))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_process_pool_gives_the_single_process_database(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("QWEN_HOME", None)
    pooled, single = tmp_path / "pooled.duckdb", tmp_path / "single.duckdb"
    assert _doctor("scan", "--db", pooled, "--jobs", "2", RECORDINGS / "qwen", env=env).returncode == 3
    assert _doctor("scan", "--db", single, "--jobs", "1", RECORDINGS / "qwen", env=env).returncode == 3
    for name in ("sessions", "results", "files"):
        columns = "* EXCLUDE (scan_id)" if name == "files" else "*"
        assert table(pooled, f"SELECT {columns} FROM {name} ORDER BY ALL") == \
            table(single, f"SELECT {columns} FROM {name} ORDER BY ALL")
    assert table(pooled, "SELECT count(*) FROM sessions WHERE agent = 'qwen'")[0][0] == 12


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
