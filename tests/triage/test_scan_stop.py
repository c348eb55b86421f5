"""Stopping `doctor scan` as cron, `timeout`, systemd or a closed terminal do (SIGTERM, SIGHUP to the
main process): every finished file is committed, no worker or forkserver outlives the scan, the exit
code says which signal, and a re-scan gives the fresh scan's tables. Through the CLI, as a process."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from triage_support import QWEN_SESSIONS, RECORDINGS, ROOT, table

TABLES = {"sessions": "*", "results": "*", "files": "* EXCLUDE (scan_id, ctime_ns, inode)"}


def _corpus(root: Path, copies: int) -> Path:
    corpus = root / "corpus"
    for copy in range(copies):
        for folder in sorted((RECORDINGS / "qwen").iterdir()):
            if (folder / "session.jsonl").is_file():
                target = corpus / f"{copy}-{folder.name}"
                target.mkdir(parents=True)
                shutil.copy(folder / "session.jsonl", target / "session.jsonl")
    return corpus


def _scan(db: Path, corpus: Path, env: dict, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "doctor.cli", "scan", "--db", str(db), "--jobs", "2", *extra,
                             str(corpus)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _committed(db: Path) -> bool:
    """Some group of files is committed (the WAL holds more than the tables and the scans row)."""
    wal = db.with_name(db.name + ".wal")
    return wal.exists() and wal.stat().st_size > 8192


def _scan_until_a_group_is_committed(tmp_path: Path):
    """A scan of 25 copies of the Qwen recordings, let run until some group is committed (or 60 s, or its end):
    (env, corpus, db, the scan, its pool's processes)."""
    env = {**os.environ, "HOME": str(tmp_path)}
    corpus = _corpus(tmp_path, 25)
    db = tmp_path / "t.duckdb"
    scan = _scan(db, corpus, env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _committed(db) and scan.poll() is None:
        time.sleep(0.02)
    return env, corpus, db, scan, psutil.Process(scan.pid).children(recursive=True)


@pytest.mark.slow
@pytest.mark.ci
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)],
                         ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_commits_what_is_finished_and_leaves_no_process(tmp_path: Path, signum: int,
                                                                      code: int) -> None:
    env, corpus, db, scan, helpers = _scan_until_a_group_is_committed(tmp_path)
    assert helpers, "the pool's forkserver and workers are running"
    os.kill(scan.pid, signum)  # the main process only, as `timeout` and `kill` do
    out, err = scan.communicate(timeout=120)
    assert scan.returncode == code, (out, err)
    assert err.count("\n") == 1 and "interrupted" in err and "Traceback" not in err, err
    _, alive = psutil.wait_procs(helpers, timeout=10)
    assert not alive, [(p.pid, p.cmdline()) for p in alive]

    sessions = table(db, "SELECT count(*) FROM sessions")[0][0]
    assert 0 < sessions < 25 * QWEN_SESSIONS, "stopped part way, with the finished files kept"
    assert table(db, "SELECT count(*) FROM sessions s WHERE tool_results <> "
                     "(SELECT count(*) FROM results r WHERE r.session_key = s.session_key)")[0][0] == 0
    assert table(db, "SELECT interrupted, files_new FROM scans") == [(True, sessions)], \
        "files_new counts the files committed, not the files planned"
    assert table(db, "SELECT count(*) FROM files")[0][0] == sessions

    _rescan_equals_a_fresh_scan(tmp_path, db, corpus, env, sessions)


def _rescan_equals_a_fresh_scan(tmp_path: Path, db: Path, corpus: Path, env: dict, committed: int) -> None:
    done = subprocess.run([sys.executable, "-m", "doctor.cli", "scan", "--db", str(db), "--jobs", "2", str(corpus)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{committed:,} unchanged" in done.stdout and f"{25 * QWEN_SESSIONS - committed:,} new" in done.stdout
    fresh = tmp_path / "fresh.duckdb"
    assert subprocess.run([sys.executable, "-m", "doctor.cli", "scan", "--db", str(fresh), "--jobs", "2", str(corpus)],
                          cwd=ROOT, env=env, capture_output=True, timeout=300).returncode == 0
    for name, columns in TABLES.items():
        assert table(db, f"SELECT {columns} FROM {name} ORDER BY ALL") == \
            table(fresh, f"SELECT {columns} FROM {name} ORDER BY ALL"), name


@pytest.mark.slow
def test_a_hard_kill_loses_at_most_the_open_group_and_the_next_scan_redoes_it(tmp_path: Path) -> None:
    """SIGKILL (no handler can run): what is committed is whole (the `files` table names it), the workers end
    with the forkserver (they ignore the signals a user would send), and the next scan reads the rest again
    and gives the fresh scan's tables."""
    env, corpus, db, scan, helpers = _scan_until_a_group_is_committed(tmp_path)
    os.kill(scan.pid, signal.SIGKILL)
    scan.wait(timeout=60)
    _, alive = psutil.wait_procs(helpers, timeout=10)
    for helper in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            helper.kill()
    assert alive == [], [helper.pid for helper in alive]
    scan.communicate(timeout=60)
    committed = table(db, "SELECT count(*) FROM files")[0][0]
    assert 0 < committed < 25 * QWEN_SESSIONS
    assert table(db, "SELECT count(*) FROM sessions")[0][0] == committed
    assert table(db, "SELECT count(*) FROM sessions s WHERE tool_results <> "
                     "(SELECT count(*) FROM results r WHERE r.session_key = s.session_key)")[0][0] == 0
    _rescan_equals_a_fresh_scan(tmp_path, db, corpus, env, committed)
