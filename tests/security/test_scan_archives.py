"""`doctor scan` on archives a stranger sent (issue 22, item 7), through the CLI as a subprocess.

On main an 872-byte `.tar.bz2` unpacked ~978 MB into `/tmp/doctor-scan-*` and a 2 MB zip with
one 2 GiB member of zeros did the same (members were copied whole before their format was
sniffed), every member re-read the archive, a killed scan left its temp folders, and links,
devices and nested archives vanished without a record. Bombs are built here from concatenated
compressed streams (a gzip or bzip2 file may hold several): a few hundred bytes to a few MB on
disk. The scan runs with RLIMIT_FSIZE at 64 MiB, so a scan that writes a bomb's member out is
killed by the kernel (SIGXFSZ) instead of filling the disk; TMPDIR is the test's own folder.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import resource
import signal
import subprocess
import tarfile
import time
import zipfile
from pathlib import Path

import duckdb
import pytest

from tests.security.writes_support import DOCTOR, LEFT_OUT

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "tests" / "recordings" / "qwen" / "errors" / "session.jsonl"
WRITE_LIMIT = 64 << 20
ZERO_BLOCK = 16 << 20


@pytest.fixture
def temp(tmp_path) -> Path:
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    return folder


def _env(home: Path, temp: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in LEFT_OUT}
    env.update(HOME=str(home), TMPDIR=str(temp), LANG="C.UTF-8", TERM="dumb")
    return env


def _limit_writes() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (WRITE_LIMIT, WRITE_LIMIT))


def scan(tmp_path: Path, temp: Path, *paths, timeout: float = 120) -> tuple[subprocess.CompletedProcess, Path]:
    db = tmp_path / "t.duckdb"
    done = subprocess.run([str(DOCTOR), "scan", "--db", str(db), "--jobs", "1", "--paths", "full", *map(str, paths)],
                          cwd=tmp_path, env=_env(tmp_path, temp), capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limit_writes)
    return done, db


def files(db: Path) -> dict[str, tuple[str, str | None]]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return {path: (status, reason)
                for path, status, reason in connection.execute("SELECT path, status, reason FROM files").fetchall()}


def _header(name: str, size: int = 0, **fields) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    for field, value in fields.items():
        setattr(info, field, value)
    return info.tobuf(format=tarfile.GNU_FORMAT)


def _padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % tarfile.BLOCKSIZE)


def tar_bomb(path: Path, compress, zero_members: list[tuple[str, int]], then: list[tuple[str, bytes]] = ()) -> None:
    """A compressed tar whose members of `size` zeros (multiples of 16 MiB) cost a few bytes each: one
    compressed 16 MiB block of zeros is repeated (a gzip or bzip2 file is a series of streams)."""
    zeros = compress(bytes(ZERO_BLOCK))
    with open(path, "wb") as out:
        for name, size in zero_members:
            assert size % ZERO_BLOCK == 0
            out.write(compress(_header(name, size)))
            for _ in range(size // ZERO_BLOCK):
                out.write(zeros)
        for name, data in then:
            out.write(compress(_header(name, len(data)) + _padded(data)))
        out.write(compress(bytes(2 * tarfile.BLOCKSIZE)))


def test_a_bzip2_bomb_is_not_unpacked(tmp_path, temp):
    """240 MiB of zeros (under the member cap) named like a session: sniffed from its first bytes, never written out."""
    bomb = tmp_path / "bomb.tar.bz2"
    tar_bomb(bomb, bz2.compress, [("a.jsonl", 240 << 20)], [("session.jsonl", SESSION.read_bytes())])
    assert bomb.stat().st_size < 16 << 10  # the session's 5 KB and a few hundred bytes of bomb
    done, db = scan(tmp_path, temp, bomb)
    assert done.returncode == 3, (done.returncode, done.stderr)
    rows = files(db)
    assert rows[f"{bomb}!a.jsonl"] == ("skipped", "not a session or report: its first bytes are not JSON (not unpacked)")
    assert rows[f"{bomb}!session.jsonl"][0] == "ok"
    assert list(temp.iterdir()) == []


def test_a_zip_member_over_the_member_cap_is_not_unpacked(tmp_path, temp):
    """A 2 MB-class zip with one 300 MiB member that starts as JSON: refused by its size, never read."""
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.write(SESSION, "first.jsonl")
        big = zipfile.ZipInfo("big.jsonl")
        big.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(big, "w", force_zip64=True) as member:
            member.write(b'{"type": "user"}\n')
            block = b" " * (1 << 20)
            for _ in range(300):
                member.write(block)
    assert bomb.stat().st_size < 4 << 20
    done, db = scan(tmp_path, temp, bomb)
    assert done.returncode == 3, (done.returncode, done.stderr)
    rows = files(db)
    assert rows[f"{bomb}!big.jsonl"][0] == "skipped"
    assert rows[f"{bomb}!big.jsonl"][1].startswith("larger than the 256 MiB a member may unpack (314,572,817 bytes")
    assert rows[f"{bomb}!first.jsonl"][0] == "ok"


@pytest.mark.slow
def test_an_archive_stops_at_its_cap_and_says_so(tmp_path, temp):
    """1.1 GiB of zeros in members under the member cap: the archive's cap (1 GiB, a 5 MB file) stops the
    stream; the session after them is not reached and the archive's row says why."""
    bomb = tmp_path / "wide.tar.gz"
    tar_bomb(bomb, gzip.compress, [(f"z{i}.jsonl", 240 << 20) for i in range(5)],
             [("session.jsonl", SESSION.read_bytes())])
    done, db = scan(tmp_path, temp, bomb, timeout=300)
    assert done.returncode == 3, (done.returncode, done.stderr)
    rows = files(db)
    assert rows[str(bomb)] == ("archive", "0 members, 5 left out; stopped at the 1.0 GiB this archive may unpack: "
                                          "the rest is not read")
    assert f"{bomb}!session.jsonl" not in rows


def _hostile_tar(path: Path) -> dict[str, str | None]:
    """Every entry shape a tar can hold, and the reason each is left out (None: scanned)."""
    session = SESSION.read_bytes()
    entries = [
        ("ok/session.jsonl", dict(size=len(session)), session, None),
        ("../../escape.jsonl", dict(size=len(session)), session, None),
        ("/abs/olute.jsonl", dict(size=len(session)), session, None),
        ("\x1b]52;c;cHduZWQ=\x07[bold red]x[/bold red]\u202e.jsonl", dict(size=len(session)), session, None),
        ("link.jsonl", dict(type=tarfile.SYMTYPE, linkname="/etc/shadow"), None,
         "a symbolic link in the archive (not followed)"),
        ("hard.jsonl", dict(type=tarfile.LNKTYPE, linkname="ok/session.jsonl"), None,
         "a hard link in the archive (not followed; its target is read as its own member)"),
        ("tty.jsonl", dict(type=tarfile.CHRTYPE, devmajor=5, devminor=0), None,
         "a device, FIFO or other special entry in the archive (never unpacked)"),
        ("pipe.jsonl", dict(type=tarfile.FIFOTYPE), None,
         "a device, FIFO or other special entry in the archive (never unpacked)"),
        ("inner.tar.gz", dict(size=4), b"\x1f\x8b\x08\x00", "an archive inside an archive (not opened: unpack it and "
                                                           "scan its folder)"),
        ("inner.zip", dict(size=4), b"PK\x03\x04", "an archive inside an archive (not opened: unpack it and scan its "
                                                   "folder)"),
    ]
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as tar:
        for name, fields, data, _ in entries:
            info = tarfile.TarInfo(name)
            for field, value in fields.items():
                setattr(info, field, value)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return {name: reason for name, _, _, reason in entries}


def test_links_devices_nested_archives_and_odd_names_are_each_recorded(tmp_path, temp):
    archive = tmp_path / "hostile.tar.gz"
    expected = _hostile_tar(archive)
    done, db = scan(tmp_path, temp, archive)
    assert done.returncode == 3, (done.returncode, done.stderr)
    rows = files(db)
    for name, reason in expected.items():
        status, stored = rows[f"{archive}!{name}"]
        assert (status, stored) == (("ok", None) if reason is None else ("skipped", reason)), name
    assert rows[str(archive)] == ("archive", "4 members, 6 left out")
    assert not (tmp_path.parent / "escape.jsonl").exists() and not Path("/abs/olute.jsonl").exists()
    for text in (done.stdout, done.stderr):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert list(temp.iterdir()) == []


def test_a_zip_holding_links_and_a_nested_archive_records_them(tmp_path, temp):
    archive = tmp_path / "links.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(SESSION, "session.jsonl")
        link = zipfile.ZipInfo("link.jsonl")
        link.external_attr = (0o120777 << 16)
        zipped.writestr(link, "/etc/shadow")
        fifo = zipfile.ZipInfo("fifo.jsonl")
        fifo.external_attr = (0o010644 << 16)
        zipped.writestr(fifo, "")
        zipped.writestr("nested.tgz", b"\x1f\x8b")
        zipped.writestr("notes.txt", b"not a session")
    done, db = scan(tmp_path, temp, archive)
    assert done.returncode == 3, (done.returncode, done.stderr)
    rows = files(db)
    assert rows[f"{archive}!session.jsonl"][0] == "ok"
    assert rows[f"{archive}!link.jsonl"] == ("skipped", "a symbolic link in the archive (not followed)")
    assert rows[f"{archive}!fifo.jsonl"] == ("skipped",
                                            "a device, FIFO or other special entry in the archive (never unpacked)")
    assert rows[f"{archive}!nested.tgz"][1].startswith("an archive inside an archive")
    assert rows[str(archive)] == ("archive", "1 member, 3 left out, 1 other file not tried")


def test_many_members_are_all_scanned_from_one_pass(tmp_path, temp):
    """100 sessions in one .tgz: every one is a row (the archive is streamed once; see
    benchmarks/bench_scan_archive.py for the time against the same sessions as plain files)."""
    archive = tmp_path / "many.tgz"
    session = SESSION.read_bytes()
    with tarfile.open(archive, "w:gz") as tar:
        for index in range(100):
            info = tarfile.TarInfo(f"user{index}/session.jsonl")
            info.size = len(session)
            tar.addfile(info, io.BytesIO(session))
    done, db = scan(tmp_path, temp, archive, timeout=300)
    assert done.returncode == 0, done.stderr
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM files WHERE archive_key IS NOT NULL AND status = 'ok'"
                                  ).fetchone()[0] == 100
    assert list(temp.iterdir()) == []


def _unpacked_folders(temp: Path) -> list[Path]:
    return [path for path in temp.iterdir() if path.name.startswith("doctor-scan-")]


def _start_scan(tmp_path: Path, temp: Path, archive: Path, db_name: str) -> subprocess.Popen:
    return subprocess.Popen([str(DOCTOR), "scan", "--db", str(tmp_path / db_name), "--jobs", "1", str(archive)],
                            cwd=tmp_path, env=_env(tmp_path, temp), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _wait_for_unpacked(temp: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not _unpacked_folders(temp):
        assert process.poll() is None and time.monotonic() < deadline, "the scan never unpacked a member"
        time.sleep(0.01)


@pytest.fixture
def big_archive(tmp_path) -> Path:
    """Enough members that the scan is still reading them when the test stops it."""
    archive = tmp_path / "big.tgz"
    session = SESSION.read_bytes()
    with tarfile.open(archive, "w:gz") as tar:
        for index in range(1500):
            info = tarfile.TarInfo(f"u{index}/session.jsonl")
            info.size = len(session)
            tar.addfile(info, io.BytesIO(session))
    return archive


@pytest.mark.slow
@pytest.mark.parametrize("stop, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_stopped_scan_removes_the_unpacked_members(tmp_path, temp, big_archive, stop, code):
    """Ctrl-C reaches the process group (a terminal); SIGTERM and SIGHUP the scan alone (timeout, systemd)."""
    scanning = _start_scan(tmp_path, temp, big_archive, "t.duckdb")
    _wait_for_unpacked(temp, scanning)
    if stop == signal.SIGINT:
        os.killpg(scanning.pid, stop)
    else:
        scanning.send_signal(stop)
    _, err = scanning.communicate(timeout=120)
    assert scanning.returncode == code, err
    assert _unpacked_folders(temp) == []


@pytest.mark.slow
def test_a_killed_scans_members_are_removed_by_the_next_scan(tmp_path, temp, big_archive):
    scanning = _start_scan(tmp_path, temp, big_archive, "t.duckdb")
    _wait_for_unpacked(temp, scanning)
    os.killpg(scanning.pid, signal.SIGKILL)
    scanning.wait(timeout=60)
    left = _unpacked_folders(temp)
    assert left, "SIGKILL cannot be handled: the folder stays until the next scan"
    archive = tmp_path / "small.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(SESSION, "session.jsonl")
    done, _ = scan(tmp_path, temp, archive)
    assert done.returncode == 0, done.stderr
    assert _unpacked_folders(temp) == []


def test_a_damaged_archive_is_one_skipped_row_naming_its_own_kind(tmp_path, temp):
    """A `.zip` that is not one says so (on main it was "(tar: ReadError…)"); a cut `.tar.gz` names gzip."""
    broken_zip = tmp_path / "broken.zip"
    broken_zip.write_bytes(b"PK\x03\x04 cut short")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(b"\x1f\x8b\x08 not really gzip")
    done, db = scan(tmp_path, temp, broken_zip, cut)
    assert done.returncode == 3, (done.returncode, done.stderr)
    rows = files(db)
    assert rows[str(broken_zip)] == ("skipped", "not a readable zip archive (no zip directory at its end)")
    assert rows[str(cut)][0] == "skipped" and rows[str(cut)][1].startswith("not a readable tar or zip archive (gz: ")
