"""One resumable reader state per transcript, in doctor's cache folder, trusted only while it matches.

`<user cache dir>/doctor/statusline/<hash of agent and path>.pickle` holds the state, the byte
offset it reached and two marks: the file's first 4 KiB and the 4 KiB before the offset, as
bytes (comparing 8 KiB costs less than importing hashlib). The state is used only when the file
is still at least that long and both marks match; a truncated or rewritten transcript (or a state written by other code: the stamp covers
doctor's version and the sizes and times of the reader and core modules) starts again from byte 0. The folder
is 0700 and each file 0600; a file another user could have written is never unpickled.
Saving writes a temporary file and `os.replace`s it, so two status lines racing each leave a
whole index (the later one wins) and a reader never sees half a file.
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from pathlib import Path

import doctor

FORMAT = 1
MARK_BYTES = 4096


def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("doctor")) / "statusline"


def index_file(agent: str, transcript: Path) -> Path:
    name = f"{agent}\0{transcript}".encode("utf-8", "surrogateescape")
    key = f"{zlib.crc32(name):08x}{zlib.adler32(name):08x}"  # a name, not a check: the path is in the file
    return cache_dir() / f"{key}.pickle"


def code_stamp() -> tuple:
    """What the pickled state's shape depends on: doctor's version, the readers' modules and the core
    ones whose objects a state holds (measured text, Qwen's result table with its budgets and stubs)."""
    root = Path(doctor.__file__).parent
    files = sorted([*(root / "sources").rglob("*.py"), *(root / "statusline").glob("*.py"), *(root / "core").glob("*.py")])
    return (doctor.__version__, FORMAT, sys.version_info[:2],
            tuple((str(f.relative_to(root)), s.st_size, s.st_mtime_ns) for f in files for s in (f.stat(),)))


def marks(handle, offset: int) -> tuple[bytes, bytes]:
    """(head, before-offset) bytes of an open transcript."""
    handle.seek(0)
    head = handle.read(min(offset, MARK_BYTES))
    start = max(0, offset - MARK_BYTES)
    handle.seek(start)
    return head, handle.read(offset - start)


def load(agent: str, transcript: Path, stamp: tuple):
    """The saved state of `transcript` when it still matches the file, else None."""
    where = index_file(agent, transcript)
    try:
        with open(where, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return None
            saved = pickle.load(handle)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("stamp") != stamp or saved.get("path") != str(transcript):
        return None
    offset = saved.get("offset")
    try:
        with open(transcript, "rb") as handle:
            if not isinstance(offset, int) or os.fstat(handle.fileno()).st_size < offset:
                return None  # truncated
            if marks(handle, offset) != saved.get("marks"):
                return None  # rewritten
    except OSError:
        return None
    return saved.get("state")


def snapshot(state, transcript: Path, stamp: tuple) -> bytes | None:
    """The index file's bytes for `state` as it is now (None: the file changed under us, or the state
    holds a value nested too deeply to pickle, such as a hostile first record: the next call reads again)."""
    try:
        with open(transcript, "rb") as handle:
            found = marks(handle, state.offset)
    except OSError:
        return None
    try:
        return pickle.dumps({"stamp": stamp, "path": str(transcript), "offset": state.offset, "marks": found,
                             "state": state}, protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return None


def save(agent: str, transcript: Path, data: bytes) -> None:
    """Replace the index of `transcript` in one step (a racing writer's whole file, or ours)."""
    where = index_file(agent, transcript)
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = where.with_name(f".{where.name}.{os.getpid()}.{os.urandom(4).hex()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, where)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
