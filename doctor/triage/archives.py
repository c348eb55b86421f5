"""Tar and zip archives of sessions or reports, as support receives them: unpacked once, within caps.

An archive is a stranger's. Each is read in one pass, in its own order (a tar as a stream, a zip
member after member from its central directory): re-opening it per member made 4,000 members of
a 28 KB `.tgz` take minutes. Each member is sniffed from its first bytes while it streams, so a
member that does not start as JSON (a 2 GiB run of zeros) is never copied, and the bytes read are
capped per member and per archive: an 872-byte `.tar.bz2` can hold a gigabyte. What is read counts
against the archive's cap whether it is kept or skipped (a tar's skipped member is still
decompressed to reach the next), so a bomb costs at most that cap of decompression (the caps and
why: doctor/safety/archive_caps.py).

A kept member is written to `Unpacked`, a private folder (0700, `mkdtemp`) that the scan removes
when it ends, however it ends (a Ctrl-C or SIGTERM unwinds through its `finally`); a folder left
by a scan that was killed outright is removed by the next scan (`sweep_stale`). Members are
written under a numbered folder with their base name only, never at a path the archive names
(`../` and absolute names cannot write anywhere else). Every member that is left out (a link, a
device, a nested archive, one over a cap or not JSON) comes back as a `Member` with its reason,
which the scan records as a skipped file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from doctor.safety.archive_caps import ARCHIVE_BYTES, ARCHIVE_ENTRIES, ARCHIVE_RATIO, MEMBER_BYTES

SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MEMBER_SUFFIXES = (".json", ".jsonl")

SNIFF_BYTES = 64 << 10  # a member's first bytes, read before anything is written
CHUNK = 1 << 20

_PREFIX = "doctor-scan-"
_STALE = re.compile(re.escape(_PREFIX) + r"(\d+)-")


def is_archive(path: Path | str) -> bool:
    return str(path).lower().endswith(SUFFIXES)


@dataclass(frozen=True)
class Member:
    """One entry of an archive that could hold a session: its unpacked copy, or why it was left out."""

    name: str
    path: Path | None = None
    size: int = 0
    reason: str | None = None


@dataclass
class Unpacking:
    """What one archive gave: its members (kept or left out), the entries not tried (not named as
    sessions, as in a folder), and why it stopped early, if it did."""

    members: list[Member]
    other_files: int = 0
    stopped: str | None = None

    def describe(self) -> str:
        kept = sum(1 for member in self.members if member.path is not None)
        parts = [f"{kept:,} member{'s' if kept != 1 else ''}"]
        left = len(self.members) - kept
        if left:
            parts.append(f"{left:,} left out")
        if self.other_files:
            parts.append(f"{self.other_files:,} other file{'s' if self.other_files != 1 else ''} not tried")
        text = ", ".join(parts)
        return f"{text}; {self.stopped}" if self.stopped else text


class _CapReached(Exception):
    """The archive's cap on unpacked bytes was reached."""


class _Budget:
    """The bytes one archive may still unpack; every read draws from it."""

    def __init__(self, path: Path) -> None:
        self.cap = max(ARCHIVE_BYTES, ARCHIVE_RATIO * os.stat(path).st_size)
        self.left = self.cap

    def draw(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise _CapReached


class _Counted:
    """A decompressed stream whose reads draw from the budget (a tar's headers and skipped members too)."""

    def __init__(self, stream, budget: _Budget):
        self.stream, self.budget = stream, budget

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(CHUNK if size is None or size < 0 else size)
        self.budget.draw(len(data))
        return data

    def close(self) -> None:
        self.stream.close()


class Unpacked:
    """`with Unpacked() as folder:` a private folder for archive members, removed on the way out."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self._count = 0

    def __enter__(self) -> Unpacked:
        sweep_stale()
        return self

    def __exit__(self, *exc) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None

    def new_file(self, name: str) -> tuple[Path, int]:
        """A new, empty file for a member named `name` (its base name kept: readers may read the
        session id from it), opened for writing: (its path, its descriptor)."""
        if self.path is None:
            self.path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        self._count += 1
        folder = self.path / str(self._count)
        folder.mkdir(mode=0o700)
        target = folder / _local_name(name)
        return target, os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


def _local_name(name: str) -> str:
    """The member's base name, as a file name this folder can hold (the suffix kept)."""
    base = PurePosixPath(name.replace("\\", "/")).name.replace("\0", "")
    suffix = next((s for s in MEMBER_SUFFIXES[::-1] if base.lower().endswith(s)), "")
    if base in ("", ".", "..") or len(base.encode("utf-8", "surrogateescape")) > 200:
        base = f"member{suffix}"
    return base


def sweep_stale() -> None:
    """Remove unpack folders of this user's scans that are no longer running (a scan killed with SIGKILL
    cannot remove its own). Only folders named as doctor names them, owned by this user, not links."""
    root = tempfile.gettempdir()
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        found = _STALE.match(entry.name)
        if found is None or int(found[1]) == os.getpid():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or _running(int(found[1])):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: not ours to judge
    return True


def unpack(path: Path, into: Unpacked) -> Unpacking:
    """Every member of the archive that could hold a session, each unpacked into `into` or left out with
    its reason (raises ValueError when the archive itself cannot be read)."""
    budget = _Budget(path)
    result = Unpacking([])
    if path.name.lower().endswith(".zip"):  # by name, as is_archive decides: a tar ending in a zip is a tar
        if not zipfile.is_zipfile(path):
            raise ValueError("not a readable zip archive (no zip directory at its end)")
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, NotImplementedError, ValueError, EOFError) as exc:
            raise ValueError(f"not a readable zip archive ({exc})") from None
        with archive:
            _take(_zip_entries(archive, budget), result, into, budget)
        return result
    try:
        stream, method = _decompressed(path)
    except OSError as exc:
        raise ValueError(f"not a readable tar or zip archive ({exc.strerror or exc})") from None
    try:
        _take(_tar_entries(_Counted(stream, budget)), result, into, budget)
    except _Damaged as exc:
        cause = f"{method}: {str(exc.__cause__).splitlines()[0] if str(exc.__cause__) else type(exc.__cause__).__name__}"
        if not result.members and not result.other_files:
            raise ValueError(f"not a readable tar or zip archive ({cause})") from None
        result.stopped = f"damaged after this point ({cause}): the rest is not read"
    finally:
        stream.close()
    return result


class _Damaged(Exception):
    """The archive's stream broke off (its cause is the decompressor's or tarfile's error)."""


_STREAM_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError)
_ZIP_MEMBER_ERRORS = (zipfile.BadZipFile, NotImplementedError, RuntimeError, *_STREAM_ERRORS)


@dataclass(frozen=True)
class _Entry:
    name: str
    kind: str  # file, dir, symlink, hardlink, special
    size: int
    open: object  # () -> a readable stream of the member's bytes


def _take(entries: Iterator[_Entry], result: Unpacking, into: Unpacked, budget: _Budget) -> None:
    """Each entry in archive order: recorded as left out, counted as not tried, or copied."""
    try:
        for count, entry in enumerate(entries, 1):
            if count > ARCHIVE_ENTRIES:
                result.stopped = f"stopped after {ARCHIVE_ENTRIES:,} entries: the rest is not read"
                return
            reason = _left_out(entry)
            if reason is not None:
                result.members.append(Member(entry.name, size=entry.size, reason=reason))
            elif entry.kind == "file" and entry.name.lower().endswith(MEMBER_SUFFIXES):
                result.members.append(_copy(entry, into))
            elif entry.kind == "file":
                result.other_files += 1
    except _CapReached as exc:
        cap = f"the {_size(budget.cap)} this archive may unpack"
        if exc.args:
            result.members.append(Member(exc.args[0], reason=f"past {cap} (not unpacked)"))
        result.stopped = f"stopped at {cap}: the rest is not read"


def _size(count: int) -> str:
    return f"{count / (1 << 30):,.1f} GiB" if count >= 1 << 30 else f"{count / (1 << 20):,.0f} MiB"


def _left_out(entry: _Entry) -> str | None:
    """Why an entry is left out before any of its bytes are read; None when there is nothing to say."""
    if entry.kind == "symlink":
        return "a symbolic link in the archive (not followed)"
    if entry.kind == "hardlink":
        return "a hard link in the archive (not followed; its target is read as its own member)"
    if entry.kind == "special":
        return "a device, FIFO or other special entry in the archive (never unpacked)"
    if entry.kind != "file":
        return None
    if is_archive(entry.name):
        return "an archive inside an archive (not opened: unpack it and scan its folder)"
    if entry.name.lower().endswith(MEMBER_SUFFIXES) and entry.size > MEMBER_BYTES:
        return _over_member_cap(entry.size)
    return None


def _over_member_cap(size: int) -> str:
    return (f"larger than the {MEMBER_BYTES >> 20} MiB a member may unpack ({size:,} bytes or more): "
            "unpack the archive and scan the file")


def _copy(entry: _Entry, into: Unpacked) -> Member:
    """The member sniffed from its first bytes, then copied (at most MEMBER_BYTES) into its own file."""
    try:
        source = entry.open()
        head = source.read(SNIFF_BYTES)
    except _CapReached:
        raise _CapReached(entry.name) from None
    except _ZIP_MEMBER_ERRORS as exc:
        return Member(entry.name, reason=f"damaged in the archive ({exc})")
    start = head.lstrip()
    if start and start[:1] not in (b"{", b"["):
        return Member(entry.name, reason="not a session or report: its first bytes are not JSON (not unpacked)")
    if not start and len(head) == SNIFF_BYTES:
        return Member(entry.name, reason=f"not a session or report: its first {SNIFF_BYTES >> 10} KiB are blank")
    target, descriptor = into.new_file(entry.name)
    size = len(head)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(head)
            while size <= MEMBER_BYTES and (chunk := source.read(CHUNK)):
                size += len(chunk)
                out.write(chunk)
    except _CapReached:
        os.unlink(target)
        raise _CapReached(entry.name) from None
    except _ZIP_MEMBER_ERRORS as exc:
        os.unlink(target)
        return Member(entry.name, reason=f"damaged in the archive ({exc})")
    if size > MEMBER_BYTES:
        os.unlink(target)
        return Member(entry.name, size=size, reason=_over_member_cap(size))
    return Member(entry.name, target, size)


def _tar_entries(stream: _Counted) -> Iterator[_Entry]:
    """A tar's entries as it streams (`r|`: never a seek back, each header read once)."""
    try:
        archive = tarfile.open(fileobj=stream, mode="r|")
        for info in archive:
            kind = ("dir" if info.isdir() else "symlink" if info.issym() else "hardlink" if info.islnk()
                    else "file" if info.isreg() else "special")
            yield _Entry(info.name, kind, info.size, lambda info=info: archive.extractfile(info))
    except _STREAM_ERRORS as exc:
        raise _Damaged from exc


def _zip_entries(archive: zipfile.ZipFile, budget: _Budget) -> Iterator[_Entry]:
    """A zip's entries from its central directory; each member read once, its bytes counted."""
    for info in archive.infolist():
        yield _Entry(info.filename, _zip_kind(info), info.file_size,
                     lambda info=info: _Counted(archive.open(info), budget))


def _zip_kind(info: zipfile.ZipInfo) -> str:
    """What a zip entry is, from the Unix mode its creator recorded (a zip made on Unix can hold links)."""
    if info.is_dir():
        return "dir"
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no type recorded (a zip made elsewhere)
    if kind == stat.S_IFLNK:
        return "symlink"
    if kind == stat.S_IFDIR:
        return "dir"
    return "file" if kind in (0, stat.S_IFREG) else "special"


def _decompressed(path: Path):
    """The archive's tar stream, decompressed by what its first bytes say, and the method's name."""
    with open(path, "rb") as handle:
        magic = handle.read(6)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.open(path, "rb"), "gz"
    if magic.startswith(b"BZh"):
        return bz2.open(path, "rb"), "bz2"
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(path, "rb"), "xz"
    return open(path, "rb"), "tar"
