"""Has a file changed since the last scan? Size, mtime, ctime, inode and a digest of its head and tail.

Reading only the two ends keeps an unchanged re-scan of thousands of files at a stat
and 2 × 16 KB each. Size, mtime and the two ends alone missed a same-size rewrite in the
middle whose writer kept the mtime (`touch -r`, `rsync -t`, a tool renamed mid-file): the
ctime (set by the kernel on every write, no user tool can set it back) and the inode (a
rewrite by rename is a new file) catch it. A file that grew is recognised as appended to when its old head and
the bytes that used to be its tail are still the same: only then may the scan keep the
rows it already has and add the new ones.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from doctor.safety.reads import Refused, open_regular

EDGE_BYTES = 16 * 1024

NEW, UNCHANGED, GROWN, CHANGED = "new", "unchanged", "grown", "changed"


@dataclass(frozen=True, slots=True)
class Fingerprint:
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    head_len: int
    head_digest: str
    tail_len: int
    tail_digest: str


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _read(handle, offset: int, length: int) -> bytes:
    handle.seek(offset)
    return handle.read(length)


def fingerprint(path: str) -> Fingerprint:
    """The file's fingerprint now (raises OSError when it cannot be read, or is no longer a regular
    file: one swapped for a FIFO since the folder was listed is not opened, so it cannot block)."""
    try:
        descriptor = open_regular(path)
    except Refused as exc:
        raise OSError(exc.reason) from None
    with os.fdopen(descriptor, "rb") as handle:
        stat = os.fstat(handle.fileno())
        size = stat.st_size
        head = _read(handle, 0, EDGE_BYTES)
        tail_len = min(EDGE_BYTES, size)
        tail = _read(handle, size - tail_len, tail_len)
    return Fingerprint(size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, len(head), _digest(head), len(tail),
                       _digest(tail))


def compare(path: str, now: Fingerprint, before: Fingerprint | None) -> str:
    """NEW, UNCHANGED, GROWN (the old bytes are still the file's start) or CHANGED."""
    if before is None:
        return NEW
    if now == before:
        return UNCHANGED
    if now.size <= before.size:
        return CHANGED
    try:
        with open(path, "rb") as handle:
            head = _read(handle, 0, before.head_len)
            old_tail = _read(handle, before.size - before.tail_len, before.tail_len)
    except OSError:
        return CHANGED
    if _digest(head) == before.head_digest and _digest(old_tail) == before.tail_digest:
        return GROWN
    return CHANGED
