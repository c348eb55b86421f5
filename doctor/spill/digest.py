"""Measure a spill file in one streaming pass: bytes, sha256, UTF-16 length, lines, head.

The audit compares these with what the stub declared. A spill file can be hundreds of
megabytes, so the pass reads fixed 1 MiB chunks (memory stays flat), runs on a worker
thread that reports progress, and its results are cached by ``(path, size, mtime_ns)``:
an unchanged file is never hashed twice, a rewritten one always is.

Files are opened read-only and non-blocking (a FIFO planted where a spill file should be
must not hang the audit); nothing is ever written next to them. The optional persistent
cache is a file its caller names (``DigestCache(file)``), never one beside a session.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from doctor.sources.base import os_error_reason
from doctor.spill.errors import SpillFileError

CHUNK_BYTES = 1 << 20
# Enough bytes for the copy of the head most stubs keep (Gemini: 8,000 characters at its default threshold,
# ≤ 4 bytes each); a longer preview is compared as far as this head goes (spill.audit).
HEAD_BYTES = 32 * 1024

# UTF-8 continuation bytes (10xxxxxx) start no character; lead bytes 11110xxx start an
# astral character, which is two UTF-16 units in JavaScript.
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))
_ASTRAL_LEAD_BYTES = bytes(range(0xF0, 0x100))

Progress = Callable[[str, int, int], None]  # (path, bytes done, total bytes)


@dataclass(frozen=True, slots=True)
class FileMeasure:
    """What one pass over a spill file found. ``head`` is its first characters, decoded."""

    size: int
    sha256: str
    utf16_units: int
    lines: int
    head: str


def utf16_units_of(chunk: bytes) -> int:
    """JavaScript length of UTF-8 ``chunk``, without decoding it.

    Exact for valid UTF-8 (every character has one lead byte; astral ones add a unit),
    and stable across chunk boundaries because it counts bytes, not characters.
    """
    leads = len(chunk) - len(chunk.translate(None, _CONTINUATION_BYTES))
    astral = len(chunk) - len(chunk.translate(None, _ASTRAL_LEAD_BYTES))
    return len(chunk) - leads + astral


def measure_file(path: str | os.PathLike[str], progress: Progress | None = None,
                 limit: int | None = None) -> FileMeasure:
    """Stream ``path`` once. Raises SpillFileError for anything but a readable regular file, and for one that
    holds more than ``limit`` bytes when read (it grew after it was sized)."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise SpillFileError(name, os_error_reason(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SpillFileError(name, "not a regular file")
        return _stream(fd, name, info.st_size, progress, limit)
    finally:
        os.close(fd)


def _stream(fd: int, name: str, total: int, progress: Progress | None, limit: int | None) -> FileMeasure:
    digest = hashlib.sha256()
    units = newlines = done = 0
    head = b""
    last = b""
    while chunk := os.read(fd, CHUNK_BYTES):
        digest.update(chunk)
        units += utf16_units_of(chunk)
        newlines += chunk.count(b"\n")
        if len(head) < HEAD_BYTES:
            head += chunk[: HEAD_BYTES - len(head)]
        last = chunk[-1:]
        done += len(chunk)
        if limit is not None and done > limit:
            raise SpillFileError(name, f"grew past {limit:,} bytes while it was read; not hashed")
        if progress is not None:
            progress(name, done, max(total, done))
    lines = newlines + (1 if last and last != b"\n" else 0)
    return FileMeasure(done, digest.hexdigest(), units, lines, head.decode("utf-8", "ignore"))


CacheKey = tuple[str, int, int]


def cache_key(path: str | os.PathLike[str]) -> CacheKey:
    """``(real path, size, mtime_ns)``: a changed file gets a new key, so stale digests never match."""
    info = os.stat(path)
    return (os.path.realpath(path), info.st_size, info.st_mtime_ns)


class DigestCache:
    """Measures by cache key, in memory; optionally loaded from and saved to a user cache file."""

    def __init__(self, file: Path | None = None) -> None:
        self._file = file
        self._lock = threading.Lock()
        self._entries: dict[CacheKey, FileMeasure] = {}
        if file is not None:
            self._load(file)

    def get(self, key: CacheKey) -> FileMeasure | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: CacheKey, measure: FileMeasure) -> None:
        with self._lock:
            self._entries[key] = measure

    def save(self) -> None:
        """Write the cache file (when one was given), atomically, mode 0600."""
        if self._file is None:
            return
        with self._lock:
            rows = [[*key, asdict(measure)] for key, measure in self._entries.items()]
        self._file.parent.mkdir(parents=True, exist_ok=True)
        from doctor.safety.writes import write_private  # a new file renamed over it: never through a planted link

        write_private(self._file, json.dumps(rows), durable=False)  # a lost cache is only a slower audit

    def _load(self, file: Path) -> None:
        try:
            rows = json.loads(file.read_text(encoding="utf-8"))
            self._entries = {(path, size, mtime): FileMeasure(**fields) for path, size, mtime, fields in rows}
        except (OSError, ValueError, TypeError):
            self._entries = {}  # a missing or corrupt cache is only a slower audit


class Digester:
    """Measures files on one worker thread, consulting the cache first.

    ``submit`` returns at once with a Future; progress callbacks run on the worker.
    One thread, because the work is disk-bound and the audit wants files in order.
    """

    def __init__(self, cache: DigestCache | None = None, progress: Progress | None = None) -> None:
        self.cache = cache if cache is not None else DigestCache()
        self._progress = progress
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="doctor-spill-digest")

    def submit(self, path: str | os.PathLike[str], limit: int | None = None) -> Future:
        return self._pool.submit(self._measure, os.fspath(path), limit)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> "Digester":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _measure(self, path: str, limit: int | None) -> FileMeasure:
        key = cache_key(path)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        measure = measure_file(path, self._progress, limit)
        self.cache.put(key, measure)
        return measure
