"""What the triage tests share: a clean home (no settings of this machine), the CLI in-process, the database."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "report"))

from report_support import FIXTURES, RECORDINGS, all_sources, qwen_scenarios, run_cli  # noqa: E402

__all__ = ["FIXTURES", "QWEN_SESSIONS", "RECORDINGS", "ROOT", "all_sources", "qwen_scenarios", "run_cli", "table",
           "scan"]


def scan(capsys, db: Path, *args, jobs: str = "1") -> tuple[int, str, str]:
    return run_cli(capsys, "scan", "--db", db, "--jobs", jobs, *args)


def table(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def memory_json(capsys, session: Path, *extra) -> dict:
    code, out, err = run_cli(capsys, "memory", session, "--json", *extra)
    assert code in (0, 3), err
    return json.loads(out)


QWEN_SESSIONS = sum((folder / "session.jsonl").is_file() for folder in (RECORDINGS / "qwen").iterdir())
"""How many Qwen recordings the repository holds (the corpora some tests copy 25 times)."""
