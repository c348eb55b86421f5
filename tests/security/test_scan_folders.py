"""`doctor scan FOLDER` on a folder a stranger controls (issue 22, item 8; issue 24, item 13).

Through the CLI as a subprocess with a timeout: before the fix a FIFO named like a session
blocked the scan forever in its first `open`, so the subprocess itself is the only seam that
can show it. Every special file, every link below the folder and every folder that cannot be
listed is recorded as skipped, with its reason, in the files table and the report.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "tests" / "recordings" / "qwen" / "errors" / "session.jsonl"


def _doctor(*args, env=None, user=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120, user=user)


def _env(home: Path) -> dict:
    env = {**os.environ, "HOME": str(home)}
    for name in ("QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "DOCTOR_CONFIG"):
        env.pop(name, None)
    return env


def _files(db: Path) -> dict[str, tuple[str, str | None]]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return {path: (status, reason) for path, status, reason in
                connection.execute("SELECT path, status, reason FROM files").fetchall()}


def test_special_files_and_links_in_a_folder_are_skipped_with_their_reason(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    (folder / "deep").mkdir(parents=True)
    shutil.copy(SESSION, folder / "deep" / "session.jsonl")
    os.mkfifo(folder / "stuck.jsonl")
    secret = tmp_path / "secret.json"
    secret.write_text('{"schemaVersion": 1, "generator": {"name": "doctor"}}')
    (folder / "link.json").symlink_to(secret)
    (folder / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "agent.sock.jsonl"))
    db = tmp_path / "t.duckdb"
    try:
        done = _doctor("scan", "--db", db, "--jobs", "1", "--paths", "full", folder, env=_env(tmp_path))
    finally:
        listener.close()
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    files = _files(db)
    assert files[str(folder / "deep" / "session.jsonl")][0] == "ok"
    assert files[str(folder / "stuck.jsonl")] == ("skipped", "not a regular file (a FIFO; never opened)")
    assert files[str(folder / "agent.sock.jsonl")] == ("skipped", "not a regular file (a socket; never opened)")
    assert files[str(folder / "link.json")] == ("skipped", "a symbolic link inside a scanned folder (not followed)")
    assert files[str(folder / "elsewhere")] == ("skipped", "a symbolic link inside a scanned folder (not followed)")
    assert str(secret) not in files, "the link's target was never read"
    assert "not a regular file (a FIFO; never opened)" in done.stdout


def test_a_fifo_named_on_the_command_line_is_skipped_not_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "named.jsonl"
    os.mkfifo(fifo)
    db = tmp_path / "t.duckdb"
    done = _doctor("scan", "--db", db, "--jobs", "1", "--paths", "full", fifo, SESSION, env=_env(tmp_path))
    assert done.returncode == 3, done.stderr
    assert _files(db)[str(fifo)] == ("skipped", "not a regular file (a FIFO; never opened)")


@pytest.fixture
def shared_tmp():
    """A folder the other user can reach (pytest's own is closed to everyone but root)."""
    folder = Path(tempfile.mkdtemp(prefix="doctor-test-"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_folder_that_cannot_be_listed_is_recorded_as_skipped(shared_tmp: Path, other_user, monkeypatch) -> None:
    """As another user (root lists every folder): a subfolder they may not list is a skipped row. The
    CLI's entry point runs in a child that became that user (this interpreter is not theirs to start),
    with every module it needs imported before the switch (the same scan run once as root first)."""
    from doctor.cli import main

    work = shared_tmp / "work"
    (work / "inbox" / "closed").mkdir(parents=True)
    shutil.copy(SESSION, work / "inbox" / "session.jsonl")
    shutil.copy(SESSION, work / "inbox" / "closed" / "hidden.jsonl")
    for path in (work, work / "inbox", work / "inbox" / "session.jsonl"):
        other_user.own(path)
    os.chmod(work / "inbox" / "closed", 0o700)  # root's, closed to the other user
    for name, value in _env(work).items():
        monkeypatch.setenv(name, value)
    db = work / "t.duckdb"
    arguments = ["scan", "--db", str(db), "--jobs", "1", "--paths", "full", str(work / "inbox")]

    warm = ["scan", "--db", str(shared_tmp / "warm.duckdb"), *arguments[3:]]
    assert main(warm) == 0  # root lists every folder

    def scan_as_other_user() -> None:
        if main(arguments) != 3:
            raise AssertionError("expected exit 3 (a folder skipped)")

    assert other_user.run(scan_as_other_user) == 0
    files = _files(db)
    assert files[str(work / "inbox" / "session.jsonl")][0] == "ok"
    assert files[str(work / "inbox" / "closed")] == ("skipped", "cannot read this folder: Permission denied")
