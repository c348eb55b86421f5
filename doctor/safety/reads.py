"""The one safe open: a regular file reached from `/` without following a symlink, in folders others cannot write.

A path from a model, a session or a stranger's archive is hostile. Checking it with `realpath`
and then opening it by name leaves a window (a component swapped for a symlink in between) and
follows whatever link sits in a folder another user controls. So the file is reached the way
the kernel would be asked to with `openat2(RESOLVE_NO_SYMLINKS)` (Python's `os` does not offer
that call): every directory is opened in turn from `/` with `O_NOFOLLOW | O_DIRECTORY`, relative
to the one before (`dir_fd`), and `fstat`-ed on its descriptor. A directory must belong to the
user or root and must not be writable by everyone (unless sticky, as `/tmp` is, where nobody
can replace another's entries). The last name is `lstat`-ed before it is opened, so a FIFO or a
device is never opened at all (opening a FIFO blocks; opening a tape rewinds it), then opened
with `O_NOFOLLOW | O_NONBLOCK` and `fstat`-ed again: it must be the same regular file.

`open_regular` is the weaker open for a path the user typed on purpose (`doctor spill show
--allow-outside`): symlinks are followed, as `cat` would, but only a regular file is opened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Refused(Exception):
    """Why a file may not be opened, in a few words that name no file content (the caller names the path)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def trusted_owner(uid: int) -> bool:
    """The user doctor runs as, or root: nobody else may own a folder or file doctor serves from."""
    return uid in (os.geteuid(), 0)


def check_directory(info: os.stat_result, shown: str) -> None:
    """A folder doctor may look into: the user's or root's, and not writable by everyone unless sticky."""
    if not trusted_owner(info.st_uid):
        raise Refused(f"{shown} belongs to another user (uid {info.st_uid})")
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        raise Refused(f"{shown} is writable by every user")


def open_beneath(parts: Sequence[str]) -> int:
    """A read-only descriptor on the regular file `/` + `parts`, reached with no symlink in any component.

    `parts` are plain names (no `/`, `.` or `..`). Raises Refused, or OSError for what the walk
    cannot tell apart from an ordinary failure (permission denied, too many open files).
    """
    directory, name = _walk(parts)
    try:
        return _open_regular_at(directory, name)
    finally:
        os.close(directory)


def stat_beneath(parts: Sequence[str]) -> os.stat_result:
    """What `open_beneath` would open, without opening it: the regular file's `lstat`. Raises as it does."""
    directory, name = _walk(parts)
    try:
        return _regular_entry(directory, name)
    finally:
        os.close(directory)


def _walk(parts: Sequence[str]) -> tuple[int, str]:
    """A descriptor on the folder holding the last part (every folder on the way checked), and that part."""
    if not parts or any(part in ("", ".", "..") or "/" in part or "\0" in part for part in parts):
        raise Refused("not a plain absolute path")
    directory = os.open("/", _DIRECTORY)
    shown = ""
    try:
        check_directory(os.fstat(directory), "/")
        for part in parts[:-1]:
            shown += "/" + part
            try:
                child = os.open(part, _DIRECTORY, dir_fd=directory)
            except FileNotFoundError:
                raise Refused("no such file") from None
            except OSError as exc:
                if _is_link(directory, part):
                    raise Refused(f"{shown} is a symbolic link (links are not followed here)") from None
                if isinstance(exc, NotADirectoryError):
                    raise Refused(f"{shown} is not a folder") from None
                raise
            os.close(directory)
            directory = child
            check_directory(os.fstat(directory), shown)
    except BaseException:
        os.close(directory)
        raise
    return directory, parts[-1]


def _is_link(directory: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=directory).st_mode)
    except OSError:
        return False


def _regular_entry(directory: int, name: str) -> os.stat_result:
    try:
        info = os.lstat(name, dir_fd=directory)
    except FileNotFoundError:
        raise Refused("no such file") from None
    return _check_file(info)


def _check_file(info: os.stat_result) -> os.stat_result:
    if stat.S_ISLNK(info.st_mode):
        raise Refused("is a symbolic link (links are not followed here)")
    _check_regular(info)
    if not trusted_owner(info.st_uid):
        raise Refused(f"belongs to another user (uid {info.st_uid})")
    return info


def _check_regular(info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise Refused("is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise Refused("is not a regular file (a FIFO, socket or device is never opened)")


def _open_regular_at(directory: int, name: str) -> int:
    before = _regular_entry(directory, name)
    return _still(os.open(name, _FILE, dir_fd=directory), before)


def _still(descriptor: int, before: os.stat_result) -> int:
    """`descriptor` if it is the regular file `before` described (nothing swapped in between); else closed, Refused."""
    try:
        after = os.fstat(descriptor)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(after.st_mode):
            raise Refused("changed while it was being opened")
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor on `path` if it is a regular file (symlinks followed): for a path the user chose.

    The type is checked before opening (a FIFO or device is never opened) and again on the
    descriptor, opened `O_NONBLOCK` so a file swapped for a FIFO in between cannot block.
    """
    info = os.stat(path)
    _check_regular(info)
    return _still(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC), info)
