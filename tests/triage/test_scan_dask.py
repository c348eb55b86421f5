"""`doctor scan --engine dask` on a real LocalCluster (scheduler and two worker processes on the loopback)
writes the same database as the local process pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from triage_support import FIXTURES, RECORDINGS, scan, table

TABLES = {"sessions": "*", "results": "*", "files": "* EXCLUDE (scan_id)"}


@pytest.mark.slow
@pytest.mark.ci
def test_dask_local_cluster_gives_the_local_database(capsys, tmp_path: Path) -> None:
    from distributed import LocalCluster

    local, distributed = tmp_path / "local.duckdb", tmp_path / "dask.duckdb"
    inputs = (RECORDINGS, FIXTURES)
    assert scan(capsys, local, *inputs, jobs="2")[0] == 0
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        code, out, err = scan(capsys, distributed, "--engine", "dask", "--scheduler", cluster.scheduler_address,
                              *inputs)
    assert code == 0, err
    assert table(distributed, "SELECT engine FROM scans") == [("dask",)]
    assert table(distributed, "SELECT count(*) FROM sessions")[0][0] > 30
    for name, columns in TABLES.items():
        assert table(distributed, f"SELECT {columns} FROM {name} ORDER BY ALL") == \
            table(local, f"SELECT {columns} FROM {name} ORDER BY ALL"), name


def test_dask_needs_a_scheduler(capsys, tmp_path: Path) -> None:
    code, _, err = scan(capsys, tmp_path / "t.duckdb", "--engine", "dask", RECORDINGS / "qwen" / "errors")
    assert code == 2 and "--scheduler" in err and not (tmp_path / "t.duckdb").exists()


def test_an_unreachable_scheduler_is_one_line(capsys, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, then closed: nothing listens there
    db = tmp_path / "t.duckdb"
    code, _, err = scan(capsys, db, "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
                        RECORDINGS / "qwen" / "errors")
    assert code == 2 and err.count("\n") == 1 and "cannot reach the Dask scheduler" in err
    assert list(tmp_path.iterdir()) == [tmp_path / "home"], "no database file (nor its WAL) was created"

    assert scan(capsys, db, RECORDINGS / "qwen" / "errors" / "session.jsonl")[0] == 0
    scans = table(db, "SELECT count(*) FROM scans")
    code, _, err = scan(capsys, db, "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
                        RECORDINGS / "qwen" / "multi-turn")
    assert code == 2 and "cannot reach the Dask scheduler" in err
    assert table(db, "SELECT count(*) FROM scans") == scans, "an existing database gets no scans row"
    assert table(db, "SELECT count(*) FROM files WHERE path LIKE '%multi-turn%'") == [(0,)]
