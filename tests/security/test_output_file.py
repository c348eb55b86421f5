"""Files a user names on the command line (`--output`, `scan --parquet`, `scan --openmetrics`) against planted
links, other users' files and FIFOs (issue 22 item 11), through the CLI as a subprocess.

On main, `--output` opened the name with O_CREAT|O_TRUNC and then chmod'ed it by name: a link planted
at the name (in /tmp, say) had its target overwritten and made 0600; run as root, another user's file
was overwritten the same way; a FIFO there blocked the command for ever. `--parquet` let DuckDB write
through a link at `sessions.parquet`. Now every one of them goes through doctor/safety/writes.py.
"""

from __future__ import annotations

import os
import stat

import pytest

from tests.security.writes_support import CLAUDE_SESSION, run_doctor, state, victim


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return home


def refused(done, path, why: str) -> None:
    assert done.returncode == 2, (done.stdout[-500:], done.stderr)
    assert str(path) in done.stderr and why in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_link_planted_at_the_output_name_is_refused(home, tmp_path, other_user):
    target, before = victim(tmp_path / "theirs", other_user)
    report = tmp_path / "shared" / "report.txt"
    report.parent.mkdir()
    report.symlink_to(target)
    done = run_doctor(home, "memory", str(CLAUDE_SESSION), "--output", str(report))
    refused(done, report, "is a symbolic link")
    assert state(target) == before and os.readlink(report) == str(target)


def test_another_users_file_named_as_output_is_left_alone(home, tmp_path, other_user):
    """Run as root, main truncated another user's file, wrote the report into it and made it 0600."""
    target, before = victim(tmp_path / "theirs", other_user)
    done = run_doctor(home, "memory", str(CLAUDE_SESSION), "--output", str(target))
    refused(done, target, f"belongs to another user ({other_user.name})")
    assert state(target) == before


def test_a_fifo_named_as_output_is_refused_without_waiting(home, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(run_doctor(home, "memory", str(CLAUDE_SESSION), "--output", str(fifo), timeout=30), fifo,
            "not a regular file")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_the_report_file_is_the_report_and_private(home, tmp_path):
    printed = run_doctor(home, "memory", str(CLAUDE_SESSION))
    mine = tmp_path / "report.txt"
    mine.write_text("an older report\n")
    mine.chmod(0o644)
    done = run_doctor(home, "memory", str(CLAUDE_SESSION), "--output", str(mine))
    assert done.returncode == printed.returncode and done.stdout == "", done.stderr
    assert mine.read_text() == printed.stdout and mine.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "report.txt"]  # no temporary left beside it


def test_parquet_export_does_not_write_through_a_planted_link(home, tmp_path, other_user):
    target, before = victim(tmp_path / "theirs", other_user)
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "sessions.parquet").symlink_to(target)
    done = run_doctor(home, "scan", "--db", str(tmp_path / "triage.duckdb"), str(CLAUDE_SESSION),
                      "--parquet", str(exports), timeout=120)
    refused(done, exports / "sessions.parquet", "is a symbolic link")
    assert state(target) == before
    assert sorted(p.name for p in exports.iterdir()) == ["sessions.parquet"]


def test_parquet_files_are_written_private(home, tmp_path):
    exports = tmp_path / "exports"
    done = run_doctor(home, "scan", "--db", str(tmp_path / "triage.duckdb"), str(CLAUDE_SESSION),
                      "--parquet", str(exports), timeout=120)
    assert done.returncode == 0, done.stderr
    assert {p.name: p.stat().st_mode & 0o777 for p in exports.iterdir()} == {
        "sessions.parquet": 0o600, "results.parquet": 0o600}
    assert all(p.read_bytes().startswith(b"PAR1") for p in exports.iterdir())


def test_openmetrics_refuses_a_link_at_its_name(home, tmp_path, other_user):
    """Main renamed its temporary over the link (the target was safe, the link silently gone); now the
    link is refused like every other name doctor writes."""
    target, before = victim(tmp_path / "theirs", other_user)
    metrics = tmp_path / "doctor.prom"
    metrics.symlink_to(target)
    done = run_doctor(home, "scan", "--db", str(tmp_path / "triage.duckdb"), str(CLAUDE_SESSION),
                      "--openmetrics", str(metrics), timeout=120)
    refused(done, metrics, "is a symbolic link")
    assert state(target) == before and metrics.is_symlink()
