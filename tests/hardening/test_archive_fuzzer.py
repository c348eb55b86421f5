"""Hostile archives through `doctor scan` (in-process, through `doctor.cli.main`): issue 22 items 7 and 12.

Hypothesis builds a tar (plain, gzip, bzip2, xz) or a zip out of entries a stranger could put there: a
real recorded session, a pasted report, runs of zeros (a bomb's shape, kept small here), junk, an empty
member, symbolic and hard links (to `/etc/shadow`, to another member, to `..`), character devices, FIFOs,
folders, archives inside the archive, under names with `../`, absolute paths, terminal escapes (OSC 52,
BEL), Rich markup, bidi controls, backslashes, duplicates and 300-character names; sometimes the archive
is cut short. Whatever it holds: the scan ends with 0, 2 or 3 and no traceback or internal error; every
entry named like a session, every link, device and nested archive has a row in `files` (scanned, or skipped
with a reason); nothing is written outside the scratch folder's database; the private unpack folder is gone
when the scan returns; nothing blocks (an alarm fails the run); the report prints no terminal control.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import tarfile
import tempfile
import zipfile
from pathlib import Path
from unittest import mock

import duckdb
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from doctor import cli

EXAMPLES = max(10, int(os.environ.get("DOCTOR_FUZZ_EXAMPLES", "40")) // 2)
ROOT = Path(__file__).resolve().parents[2]
SESSION = (ROOT / "tests" / "recordings" / "qwen" / "errors" / "session.jsonl").read_bytes()
REPORT = (ROOT / "tests" / "recordings" / "qwen" / "errors" / "expected.json").read_bytes()
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")

NAMES = st.sampled_from([
    "session.jsonl", "a/b/session.jsonl", "../escape.jsonl", "../../../tmp/escape.jsonl", "/abs/olute.jsonl",
    "\x1b]52;c;cHduZWQ=\x07clip.jsonl", "[bold red]x[/bold red][@click=app.quit].jsonl", "\u202eevil\u202c.jsonl",
    "dir\\win.jsonl", "report.json", "x" * 300 + ".jsonl", ".jsonl", "inner.tar.gz", "inner.zip", "notes.txt",
    "[/nope].json", "-rf.jsonl"])
KINDS = st.sampled_from(["session", "report", "zeros", "junk", "empty", "symlink", "hardlink", "device", "fifo",
                         "dir", "nested"])
ENTRIES = st.lists(st.tuples(KINDS, NAMES), min_size=1, max_size=8)
FORMATS = st.sampled_from(["tar", "tar.gz", "tar.bz2", "tar.xz", "zip"])


def _data(kind: str) -> bytes | None:
    return {"session": SESSION, "report": REPORT, "zeros": bytes(4 << 20), "junk": b"\xff\xfe not json \x00" * 50,
            "empty": b"", "nested": b"\x1f\x8b\x08\x00" + bytes(60)}.get(kind)


def _tar(path: Path, mode: str, entries) -> None:
    with tarfile.open(path, mode, format=tarfile.GNU_FORMAT) as tar:
        for kind, name in entries:
            info = tarfile.TarInfo(name)
            data = _data(kind)
            if kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/shadow"
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, "session.jsonl"
            elif kind == "device":
                info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
            info.size = len(data) if data is not None else 0
            tar.addfile(info, io.BytesIO(data) if data is not None else None)


def _zip(path: Path, entries) -> None:
    unix_types = {"symlink": 0o120777, "device": 0o020644, "fifo": 0o010644, "dir": 0o040755}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for kind, name in entries:
            info = zipfile.ZipInfo(name + ("/" if kind == "dir" and not name.endswith("/") else ""))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = unix_types.get(kind, 0o100644) << 16
            data = _data(kind) if kind not in ("symlink", "hardlink") else b"/etc/shadow"
            archive.writestr(info, data or b"")


def _build(folder: Path, fmt: str, entries, cut: bool) -> Path:
    path = folder / f"sent.{fmt}"
    if fmt == "zip":
        _zip(path, entries)
    else:
        _tar(path, {"tar": "w", "tar.gz": "w:gz", "tar.bz2": "w:bz2", "tar.xz": "w:xz"}[fmt], entries)
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[: max(1, len(data) * 2 // 3)])
    return path


def _stalled(signum, frame):
    raise AssertionError("doctor scan blocked on an archive")


def _run(arguments: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _stalled)
    signal.alarm(60)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(arguments)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def _expected_rows(entries) -> set[str]:
    """The member names that must each have a row: named like a session, or a link, device, FIFO or
    nested archive (whatever their names); a folder or another file is not a session and has none."""
    names = set()
    for kind, name in entries:
        if kind == "dir":
            continue
        if kind in ("symlink", "hardlink", "device", "fifo") or name.lower().endswith((".json", ".jsonl",
                                                                                          ".tar.gz", ".zip")):
            names.add(name)
    return names


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=FORMATS, entries=ENTRIES, cut=st.booleans())
@example(fmt="tar.gz", entries=[("session", "../escape.jsonl"), ("symlink", "link.jsonl"),
                                ("hardlink", "hard.jsonl"), ("device", "dev.jsonl"), ("nested", "inner.tar.gz")],
         cut=False)
@example(fmt="zip", entries=[("zeros", "session.jsonl"), ("symlink", "[/nope].json"), ("session", "/abs/olute.jsonl")],
         cut=False)
@example(fmt="tar.bz2", entries=[("session", "\x1b]52;c;cHduZWQ=\x07clip.jsonl"), ("zeros", "a/b/session.jsonl")],
         cut=True)
def test_a_hostile_archive_is_scanned_or_recorded_never_followed(fmt, entries, cut):
    with tempfile.TemporaryDirectory(prefix="doctor-archive-fuzz-") as outer:
        scratch = Path(outer) / "a" / "b"  # `../` names aim at the folders above: nothing may land there
        inbox, temp, home = scratch / "inbox", scratch / "tmp", scratch / "home"
        for folder in (inbox, temp, home):
            folder.mkdir(parents=True)
        archive = _build(inbox, fmt, entries, cut)
        escapes = [Path("/tmp/escape.jsonl"), Path("/abs/olute.jsonl")]
        already = [path.exists() for path in escapes]
        with mock.patch.dict(os.environ, {"HOME": str(home), "TMPDIR": str(temp)}), \
                mock.patch.object(tempfile, "tempdir", None):
            db = scratch / "t.duckdb"
            code, out, err = _run(["scan", "--db", str(db), "--jobs", "1", "--paths", "full", str(archive)])
        assert code in (0, 2, 3), (code, err)
        assert "Traceback" not in err and "internal error" not in out + err, err
        assert not any(control in out + err for control in CONTROLS), (out[-800:], err)
        assert list(temp.iterdir()) == [], "the unpack folder outlived the scan"
        assert [p.name for p in Path(outer).iterdir()] == ["a"] and [p.name for p in scratch.parent.iterdir()] == ["b"]
        assert [path.exists() for path in escapes] == already
        assert sorted(path.name for path in inbox.iterdir()) == [archive.name]
        assert sorted(path.name for path in scratch.iterdir()) == sorted(["inbox", "tmp", "home", db.name])
        with duckdb.connect(str(db), read_only=True) as connection:
            rows = dict(connection.execute("SELECT path, status FROM files").fetchall())
            reasons = connection.execute("SELECT count(*) FROM files WHERE status = 'skipped' AND "
                                         "coalesce(reason, '') = ''").fetchone()[0]
        assert reasons == 0, "a skipped row without its reason"
        assert rows.get(str(archive)) in ("archive", "skipped"), rows
        if rows[str(archive)] == "archive" and not cut:
            members = {path.split("!", 1)[1] for path in rows if "!" in path}
            assert _expected_rows(entries) <= members, (entries, members)
