"""The one way doctor writes a file: a fresh file beside the target, renamed over it, never through a link.

`replace` opens the target's folder once and does every step relative to that descriptor, so a folder
swapped midway cannot redirect one. In it, a temporary file with a random name is created with
`O_CREAT|O_EXCL|O_NOFOLLOW` (mkstemp's protocol: a link planted at that name makes the open fail
instead of being followed), written, given its final mode on the descriptor (`fchmod`, never `chmod`
by name, which would follow a link), fsynced, and renamed over the target; then the folder is fsynced.
A reader sees the old file or the new one, never half of one, and a link planted at the target's
name is replaced as a name, its target never opened.

Refused (`Refused`, an OSError whose `strerror` says why and what to do; nothing is written):
- a target that is a symbolic link. Reports, the cache and `--output` replace a name and never what a
  link planted there points to. A user's settings file that is a link (dotfiles) is different: the
  caller may choose to write through it on purpose (`through_link=True`), to the file the link leads
  to, beside that file, which then passes every check below (and the link stays a link);
- anything but a regular file (a folder, FIFO, device, socket);
- a file owned by another user. Run as root, a rename would hand the name to root and the other
  user's own file would be gone (or, for a settings file, no longer readable by its agent);
- a read-only file (no write bit for its owner): someone made it so; doctor does not override it;
- a file that changed since the caller read it (`expect`): another program's write is never lost.

Modes: `write_private` (reports, the cache, `--output`) gives 0600 whatever was there; `replace` keeps
an existing file's mode (and group where the user may) unless told one, and gives a new file 0644.
`create_unique` (backups) never overwrites anything: a new name each time, linked into place with
`link`, which fails rather than replace an existing name.
"""

from __future__ import annotations

import errno
import os
import stat

PRIVATE = 0o600
NEW_FILE = 0o644
MAX_READ = 32 * 1024 * 1024  # far beyond any settings file; a bigger "settings file" is refused, not read whole
_NAME_ROOM = 200  # of the 255 bytes a name may have: the rest is the temporary suffix
_TEMPORARY = ".doctor-"


class Refused(OSError):
    """A file doctor will not write (or read for an update); `strerror` says why and what to do."""

    def __init__(self, path, reason: str, code: int = errno.EPERM):
        super().__init__(code, reason, os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class Found:
    """A file as doctor read it before changing it: the name it was asked for (`path`), the file whose
    bytes these are (`real`: the link's target when `path` is a link read through), the bytes (None:
    absent), and its identity, checked again right before it is replaced."""

    __slots__ = ("path", "real", "data", "identity", "mode")

    def __init__(self, path: str, real: str, data: bytes | None, identity: tuple | None, mode: int | None):
        self.path, self.real, self.data, self.identity, self.mode = path, real, data, identity, mode

    @property
    def through_link(self) -> bool:
        return self.real != self.path


def write_private(path, data: str | bytes, *, durable: bool = True) -> None:
    """`data` into `path`, mode 0600 (reports, the cache, `--output`): never through a link, never
    over another user's file or a read-only one. `durable=False` skips the fsyncs (a cache that can
    be rebuilt need not wait for the disk)."""
    replace(path, data, mode=PRIVATE, durable=durable)


def read_current(path, *, through_link: bool = False, limit: int = MAX_READ) -> Found:
    """The file at `path` as it is now, for a later `replace(…, expect=found)`. A link is refused unless
    `through_link`; then the file it leads to is read (and must exist). Never blocks on a FIFO."""
    path = os.fspath(path)
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return Found(path, path, None, None, None)
    real = path
    if stat.S_ISLNK(status.st_mode):
        if not through_link:
            raise _link_refused(path)
        real = os.path.realpath(path)
        try:
            status = os.lstat(real)
        except FileNotFoundError:
            raise Refused(path, f"is a symbolic link to {real}, which does not exist; doctor does not create "
                                "a file through a link (create it, or remove the link)", errno.ENOENT) from None
    _check_kind(real, status)
    descriptor = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(descriptor)
        _check_kind(real, status)
        if status.st_size > limit:
            raise Refused(real, f"is {status.st_size:,} bytes, more than the {limit:,} doctor reads for an update",
                          errno.EFBIG)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise Refused(real, f"grew past the {limit:,} bytes doctor reads for an update", errno.EFBIG)
    finally:
        os.close(descriptor)
    return Found(path, real, b"".join(chunks), _identity(status), status.st_mode & 0o777)


def check_replaceable(found: Found) -> None:
    """Refuse now, before anything is written, what `replace` would refuse for this file."""
    if found.identity is None:
        return
    status = os.lstat(found.real)
    _check_kind(found.real, status)
    _check_ours(found.real, status)


def replace(path, data: str | bytes, *, mode: int | None = None, new_mode: int = NEW_FILE,
            expect: Found | None = None, through_link: bool = False, durable: bool = True) -> str:
    """Put `data` (str: written as UTF-8) in place of the file at `path`, atomically; the path written
    (the link's target when writing through one). `mode`: the new file's mode (default: the existing
    file's, or `new_mode`). `expect`: what `read_current` found; the file must still be that file."""
    payload = data.encode("utf-8") if isinstance(data, str) else data  # before anything is created
    swap = _Swap(path, mode=mode, new_mode=new_mode, expect=expect, through_link=through_link)
    try:
        descriptor = swap.create()
        try:
            _write_all(descriptor, payload)
        except BaseException:
            os.close(descriptor)
            raise
        swap.commit(descriptor, durable)
    finally:
        swap.close()
    return swap.target


class Replacing:
    """`with Replacing(path) as temporary:` another program (DuckDB's COPY) writes the file named
    `temporary`, created empty and private beside `path`; on a clean exit it gets its mode and is
    renamed over `path` with the checks of `replace`, on an error it is removed and `path` untouched."""

    def __init__(self, path, *, mode: int = PRIVATE):
        self.swap = _Swap(path, mode=mode, new_mode=mode, expect=None, through_link=False)

    def __enter__(self) -> str:
        try:
            os.close(self.swap.create())
        except BaseException:
            self.swap.close()
            raise
        return os.path.join(os.path.dirname(os.path.abspath(self.swap.target)), self.swap.temporary)

    def __exit__(self, kind, error, trace) -> None:
        try:
            if error is None:  # what the other program left there, if it is still a regular file
                self.swap.commit(os.open(self.swap.temporary, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                                         dir_fd=self.swap.folder), durable=True)
        finally:
            self.swap.close()


class _Swap:
    """One replacement in progress: the target's folder held open, the target's state checked, a
    temporary created beside it, and (`commit`) renamed over it; `close` removes what was not committed."""

    def __init__(self, path, *, mode: int | None, new_mode: int, expect: Found | None, through_link: bool):
        self.target = expect.real if expect is not None else _target(os.fspath(path), through_link)
        folder, self.name = os.path.split(self.target)
        self.folder = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.temporary = None
        try:
            self.status = self._checked_status(expect)
        except BaseException:
            os.close(self.folder)
            raise
        self.mode = mode if mode is not None else self.status.st_mode & 0o777 if self.status else new_mode
        self.expect = expect

    def _checked_status(self, expect: Found | None) -> os.stat_result | None:
        status = _status_at(self.name, self.folder)
        if status is not None:
            _check_kind(self.target, status)
            _check_ours(self.target, status)
        if expect is not None and (_identity(status) if status else None) != expect.identity:
            raise Refused(self.target, "changed while doctor was working on it (another program wrote it); "
                                       "nothing written, run the command again", errno.EAGAIN)
        return status

    def create(self) -> int:
        self.temporary, descriptor = _create_temporary(self.folder, self.name)
        return descriptor

    def commit(self, descriptor: int, durable: bool) -> None:
        """Give the temporary its group and mode, sync it and rename it over the target (closes `descriptor`)."""
        try:
            status = os.fstat(descriptor)
            _check_kind(self.temporary, status)
            if self.status is not None and self.status.st_gid != status.st_gid:
                try:  # a settings file shared with a group stays that group's, where the user may say so
                    os.fchown(descriptor, -1, self.status.st_gid)
                except OSError:
                    pass
            os.fchmod(descriptor, self.mode)
            if durable:
                os.fsync(descriptor)
        finally:
            os.close(descriptor)
        self._checked_status(self.expect)  # still the file the caller read, still one doctor may replace
        os.replace(self.temporary, self.name, src_dir_fd=self.folder, dst_dir_fd=self.folder)
        self.temporary = None
        if durable:
            _fsync_quietly(self.folder)

    def close(self) -> None:
        if self.temporary is not None:
            _unlink_quietly(self.temporary, self.folder)
        os.close(self.folder)


def create_unique(path, data: str | bytes, *, mode: int = PRIVATE) -> str:
    """`data` in a new file named `path`, or `path-2`, `path-3`… when that name is taken (by anything,
    a link included); never replaces a file. The name it got."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder, name = os.path.split(os.fspath(path))
    folder_descriptor = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        temporary, descriptor = _create_temporary(folder_descriptor, name)
        try:
            _fill(descriptor, payload, mode)
            chosen = _link_under_a_free_name(folder_descriptor, temporary, name, payload, mode)
        finally:
            _unlink_quietly(temporary, folder_descriptor)
        _fsync_quietly(folder_descriptor)
    finally:
        os.close(folder_descriptor)
    return os.path.join(folder, chosen)


def remove(found: Found) -> None:
    """Remove the file `read_current` found, if it is still that file (never what a link leads to:
    a link read through is left alone)."""
    if found.identity is None or found.through_link:
        return
    folder, name = os.path.split(found.real)
    folder_descriptor = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        status = _status_at(name, folder_descriptor)
        if status is None or _identity(status) != found.identity:
            raise Refused(found.real, "changed while doctor was working on it (another program wrote it); "
                                      "nothing removed, run the command again", errno.EAGAIN)
        os.unlink(name, dir_fd=folder_descriptor)
        _fsync_quietly(folder_descriptor)
    finally:
        os.close(folder_descriptor)


def make_folders(folder) -> list[str]:
    """Create `folder` and whatever above it is missing; the folders created, outermost first (so a
    caller that must undo its work can remove exactly those)."""
    missing, current = [], os.path.abspath(os.fspath(folder))
    while not os.path.lexists(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    created = []
    for each in reversed(missing):
        os.mkdir(each)
        created.append(each)
    return created


def _target(path: str, through_link: bool) -> str:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(status.st_mode):
        if not through_link:
            raise _link_refused(path)
        return os.path.realpath(path)
    return path


def _link_refused(path: str) -> Refused:
    return Refused(path, "is a symbolic link; doctor does not write through one (name the file itself, or "
                         "remove the link)", errno.ELOOP)


def _check_kind(path: str, status: os.stat_result) -> None:
    if stat.S_ISLNK(status.st_mode):
        raise _link_refused(path)
    if not stat.S_ISREG(status.st_mode):
        kind = "a folder" if stat.S_ISDIR(status.st_mode) else "a FIFO" if stat.S_ISFIFO(status.st_mode) \
            else "a socket" if stat.S_ISSOCK(status.st_mode) else "a device"
        raise Refused(path, f"is {kind}, not a regular file; doctor writes only regular files", errno.EINVAL)


def _check_ours(path: str, status: os.stat_result) -> None:
    if status.st_uid != os.geteuid():
        raise Refused(path, f"belongs to another user ({_user_name(status.st_uid)}); doctor replaces only files of "
                            "the user it runs as (run it as that user)", errno.EPERM)
    if not status.st_mode & stat.S_IWUSR:
        raise Refused(path, f"is read-only (mode {status.st_mode & 0o777:04o}); doctor leaves it as it is "
                            "(make it writable, `chmod u+w`, and run the command again)", errno.EACCES)


def _user_name(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _identity(status: os.stat_result) -> tuple:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def _status_at(name: str, folder_descriptor: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder_descriptor, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _create_temporary(folder_descriptor: int, name: str) -> tuple[str, int]:
    """A new, empty, private file beside `name`, under a random name nobody could have planted a link at."""
    for _ in range(100):
        temporary = f".{name[:_NAME_ROOM]}{_TEMPORARY}{os.urandom(6).hex()}"
        try:
            return temporary, os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                      PRIVATE, dir_fd=folder_descriptor)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name after 100 tries", name)


def _link_under_a_free_name(folder_descriptor: int, temporary: str, name: str, payload: bytes, mode: int) -> str:
    for number in range(1, 1000):
        candidate = name if number == 1 else f"{name}-{number}"
        try:
            os.link(temporary, candidate, src_dir_fd=folder_descriptor, dst_dir_fd=folder_descriptor,
                    follow_symlinks=False)
            return candidate
        except FileExistsError:
            continue
        except OSError as exc:  # a file system without hard links: create the name itself, still exclusively
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
            try:
                descriptor = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                     mode, dir_fd=folder_descriptor)
            except FileExistsError:
                continue
            _fill(descriptor, payload, mode)
            return candidate
    raise FileExistsError(errno.EEXIST, "no free name after 999 tries", name)


def _fill(descriptor: int, payload: bytes, mode: int, durable: bool = True) -> None:
    """Write `payload` into a new file, give it `mode`, sync it (unless not `durable`) and close it."""
    try:
        _write_all(descriptor, payload)
        os.fchmod(descriptor, mode)
        if durable:
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_all(descriptor: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(descriptor, view):]


def _unlink_quietly(name: str, folder_descriptor: int) -> None:
    try:
        os.unlink(name, dir_fd=folder_descriptor)
    except OSError:
        pass


def _fsync_quietly(folder_descriptor: int) -> None:
    try:
        os.fsync(folder_descriptor)
    except OSError:  # some file systems do not sync a folder; the rename itself is done
        pass


def write_private_at(folder_descriptor: int, name: str, data: bytes, *, durable: bool = False) -> None:
    """`write_private` of `name` inside a folder already opened and checked (doctor's private cache
    folders, `private_folders.PrivateFolder`): every step relative to that descriptor, so no path is
    resolved again between the folder's check and the write. A link at `name` is replaced as a name."""
    temporary, descriptor = _create_temporary(folder_descriptor, name)
    try:
        _fill(descriptor, data, PRIVATE, durable)
        os.replace(temporary, name, src_dir_fd=folder_descriptor, dst_dir_fd=folder_descriptor)
    except BaseException:
        _unlink_quietly(temporary, folder_descriptor)
        raise

