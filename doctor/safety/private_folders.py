"""doctor's own folders under the user's cache folder, opened one step at a time and used only while private.

The status line's index and last error and the slash command's full reports live under
`<user cache dir>/doctor/`. That may be where others can write (`HOME=/tmp`, a shared
`XDG_CACHE_HOME`): whoever made `doctor/` or `doctor/statusline/` first, or planted a symlink
there, would choose what doctor reads back and where it writes. So each folder from `doctor/`
down is opened relative to the one above with `O_NOFOLLOW` (made 0700 when missing) and used
only when it is a directory owned by the user; one of the user's own that group or others could
write (an older doctor made `doctor/` with the umask's mode) is first made 0700 through the
descriptor. Files are read the same way: `O_NOFOLLOW`, regular, the user's, not writable by
others, at most a stated size. Writes are `writes.write_private_at` in the open folder. A folder
refused means working without it: the caller goes on, and the reason is said once on stderr.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_said: set[str] = set()  # refusals already said on stderr by this process


class Refused(OSError):
    """A folder or file doctor will not use: a symlink, not a directory or regular file, another's, open to others."""


class PrivateFolder:
    """An open folder of doctor's, checked private: read and write files in it by name (no path resolved again)."""

    def __init__(self, descriptor: int, path: Path):
        self.descriptor = descriptor
        self.path = path

    def __enter__(self) -> PrivateFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.descriptor >= 0:
            os.close(self.descriptor)
            self.descriptor = -1

    def read(self, name: str, limit: int) -> bytes | None:
        """The file `name` (at most `limit` bytes, else None), or None when it is missing; Refused
        when it is a symlink, not a regular file, another user's or writable by others."""
        try:
            descriptor = os.open(name, _FILE, dir_fd=self.descriptor)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Refused(exc.errno, f"{self.path / name}: {exc.strerror}") from None
        with os.fdopen(descriptor, "rb") as handle:
            info = os.fstat(descriptor)
            _check_private(info, self.path / name, stat.S_ISREG, "a regular file")
            if info.st_size > limit:
                return None
            data = handle.read()  # sized by fstat, where read(limit) would allocate `limit` bytes first
        return data if len(data) <= limit else None

    def write(self, name: str, data: bytes) -> None:
        """Replace `name` with `data` in one step, 0600 (`writes.write_private_at`; no fsync: a cache)."""
        from doctor.safety.writes import write_private_at

        write_private_at(self.descriptor, name, data)


def cache_root() -> Path:
    """`<user cache dir>/doctor`: where doctor's private folders start."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("doctor"))


def open_private(root: Path, *names: str) -> PrivateFolder:
    """`root/names…`, each folder from `root` down opened without following a symlink, created 0700 when
    missing, and checked private. Raises Refused (or the OSError that stopped it)."""
    root.parent.mkdir(parents=True, exist_ok=True)  # the user's cache folder: theirs, symlinked or not
    descriptor = os.open(root.parent, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    path = root.parent
    for name in (root.name, *names):
        path = path / name
        descriptor = _open_child(descriptor, name, path)  # closes the parent, also when it raises
    return PrivateFolder(descriptor, path)


def private_cache_folder(*names: str) -> PrivateFolder | None:
    """`<user cache dir>/doctor/names…` checked private, or None (the reason said once on stderr)."""
    root = cache_root()
    try:
        return open_private(root, *names)
    except OSError as exc:
        say_once(root.joinpath(*names), exc)
        return None


def say_once(folder: Path, exc: OSError) -> None:
    """One line on stderr per refusal and process: doctor works on without the folder (a refused
    `doctor/` refuses every folder under it: said once, naming it)."""
    reason = exc.strerror if isinstance(exc, Refused) or not exc.filename else f"{exc.filename}: {exc.strerror}"
    if reason in _said:
        return
    _said.add(reason)
    print(f"doctor: not using the cache folder {folder}: {reason or exc}; working without it", file=sys.stderr)


def _open_child(parent: int, name: str, path: Path) -> int:
    """Open folder `name` under the folder `parent` (closing `parent`), creating it 0700; checked private."""
    try:
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            pass
        try:
            descriptor = os.open(name, _DIRECTORY, dir_fd=parent)
        except OSError as exc:  # ELOOP: a symlink; ENOTDIR: a file
            raise Refused(exc.errno, f"{path} is a symlink or not a folder") from None
    finally:
        os.close(parent)
    try:
        info = os.fstat(descriptor)
        _check_private(info, path, stat.S_ISDIR, "a folder", tighten=descriptor)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _check_private(info: os.stat_result, path: Path, is_kind, kind: str, tighten: int | None = None) -> None:
    if not is_kind(info.st_mode):
        raise Refused(0, f"{path} is not {kind}")
    if info.st_uid != os.geteuid():
        raise Refused(0, f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o022:
        if tighten is None:
            raise Refused(0, f"{path} is writable by others (mode {stat.S_IMODE(info.st_mode):04o})")
        os.fchmod(tighten, 0o700)  # the user's own folder, made with a loose umask: closed through the descriptor
