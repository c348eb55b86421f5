"""A sparse newline index of a file, built on a background thread.

Paging to line N of a multi-gigabyte spill file must not mean counting N newlines every
time, yet indexing every line would cost 8 bytes a line. The compromise (toolong's, made
sparse): remember the byte offset of every 1,024th line start. Any line is then at most
1,023 newlines away from a known offset, and the index costs 8 bytes per 1,024 lines.

The scan reads the file with ``os.preadv`` into one reused 1 MiB buffer and counts newlines
with ``bytearray.count`` (a tight C loop). Measured against ``mmap`` slices (which copy)
it was as fast or faster, and it keeps memory flat: no mapping of the whole file.
Checkpoints inside a chunk are located with :func:`find_nth_newline`, which also counts
instead of stepping newline by newline, so the index keeps pace with a plain count.
"""

from __future__ import annotations

import os
import threading
from array import array
from bisect import bisect_right
from dataclasses import dataclass

LINES_PER_CHECKPOINT = 1024
CHUNK_BYTES = 1 << 20
# Up to this many newlines, stepping with find/rfind beats another counting pass.
_STEP_LIMIT = 24
# Aim the counting guess this far short of the expected spot: overshooting costs a recount.
_AIM_SHORT = 0.96


def find_nth_newline(
    buffer: bytes | bytearray, n: int, start: int, end: int, bytes_per_line: float
) -> tuple[int, int]:
    """Find the n-th newline (1-based) in ``buffer[start:end]``.

    Returns ``(index, n)``, or ``(-1, newlines_in_range)`` when there are fewer than n.
    Guess where it is from the average line length, aiming a little short, count the
    newlines up to the guess, and repeat on the rest; the last few newlines are stepped
    with ``find``. Aiming short means bytes are almost never counted twice, so finding a
    checkpoint costs about one counting pass instead of n ``find`` calls.
    """
    low = start
    remaining = n
    while True:
        if remaining <= _STEP_LIMIT:
            at = low - 1
            for step in range(remaining):
                at = buffer.find(b"\n", at + 1, end)
                if at < 0:
                    return -1, n - remaining + step
            return at, n
        guess = min(end, low + max(1, int(remaining * bytes_per_line * _AIM_SHORT)))
        found = buffer.count(b"\n", low, guess)
        if found >= remaining:
            if found - remaining < _STEP_LIMIT:
                at = guess
                for _ in range(found - remaining + 1):
                    at = buffer.rfind(b"\n", low, at)
                return at, n
            bytes_per_line = (guess - low) / found
            continue
        if guess == end:
            return -1, n - remaining + found
        # No newline at all means lines are longer than guessed: widen fast.
        bytes_per_line = (guess - low) / found if found else bytes_per_line * 4
        remaining -= found
        low = guess


def scan_lines(fd: int, start: int, stop: int, n: int | None = None) -> tuple[int, int, int]:
    """Walk forward from ``start`` over complete lines, never past ``stop``.

    With ``n``, stop after skipping n newlines; without, count every newline before ``stop``.
    Returns ``(newlines_seen, offset_after_last_newline, position)``: the offset after the last
    newline seen (``start`` if none) is the start of the line where the walk ended, and
    ``position`` is where the walk stopped. Memory is one chunk, whatever the line lengths.
    """
    seen = 0
    line_start = start
    position = start
    while position < stop and (n is None or seen < n):
        chunk = os.pread(fd, min(CHUNK_BYTES, stop - position), position)
        if not chunk:
            break
        if n is not None:
            at, found = find_nth_newline(chunk, n - seen, 0, len(chunk), 64.0)
            if at >= 0:
                return n, position + at + 1, position + at + 1
        else:
            found = chunk.count(b"\n")
        if found:
            line_start = position + chunk.rfind(b"\n") + 1
        seen += found
        position += len(chunk)
    return seen, line_start, position


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """A consistent snapshot of how far the index got."""

    bytes_indexed: int
    total_bytes: int
    lines_seen: int
    done: bool

    @property
    def fraction(self) -> float:
        return 1.0 if self.total_bytes == 0 else self.bytes_indexed / self.total_bytes


class LineIndex:
    """Checkpoints ``line number -> byte offset`` every 1,024 lines of an open file.

    The index reads through a file descriptor it does not own: the pager opens the file
    read-only and keeps the descriptor, so rotation is detected against the same inode.
    Readers may query at any time; they see the checkpoints found so far.
    """

    def __init__(self, fd: int, size: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._checkpoints = array("Q", [0])
        self._target = size
        self._indexed = 0
        self._newlines = 0
        self._ends_with_newline = True
        self._bytes_per_line = 64.0
        self._cancelled = threading.Event()
        self._finished = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> None:
        """Index in the background up to the size given so far."""
        with self._lock:
            if self._thread is not None and not self._finished.is_set():
                return
            previous = self._thread
        if previous is not None:
            previous.join()
        self._finished.clear()
        self._thread = threading.Thread(target=self._run, name="doctor-line-index", daemon=True)
        self._thread.start()

    def extend(self, size: int) -> None:
        """The file grew to ``size``: index the new tail too (follow mode)."""
        with self._lock:
            if size <= self._target:
                return
            self._target = size
            # A running scan re-reads the target under the lock before it stops.
            if self._thread is not None and not self._finished.is_set():
                return
        self.start()

    def cancel(self) -> None:
        """Stop the scan and wait for the thread, so the descriptor can be closed safely."""
        self._cancelled.set()
        thread = self._thread
        if thread is not None:
            thread.join()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the index covers the whole file; False on timeout."""
        if self._thread is None:
            return self.progress.done
        return self._finished.wait(timeout)

    # -- queries -----------------------------------------------------------------

    @property
    def progress(self) -> IndexProgress:
        with self._lock:
            return IndexProgress(self._indexed, self._target, self._newlines, self._indexed >= self._target)

    @property
    def line_count(self) -> int | None:
        """Lines in the file once fully indexed, else None.

        A trailing newline ends the last line rather than starting an empty one, so
        ``b"a\\nb\\n"`` and ``b"a\\nb"`` both have two lines and an empty file has none.
        """
        with self._lock:
            if self._indexed < self._target:
                return None
            return self._newlines + (0 if self._ends_with_newline else 1)

    @property
    def memory_bytes(self) -> int:
        """Bytes held by the checkpoint array (the index's only per-file cost)."""
        with self._lock:
            return self._checkpoints.buffer_info()[1] * self._checkpoints.itemsize

    def checkpoint_for_line(self, line: int) -> tuple[int, int]:
        """The known ``(line, offset)`` closest to ``line`` from below."""
        with self._lock:
            slot = min(line // LINES_PER_CHECKPOINT, len(self._checkpoints) - 1)
            return slot * LINES_PER_CHECKPOINT, self._checkpoints[slot]

    def checkpoint_for_offset(self, offset: int) -> tuple[int, int]:
        """The known ``(line, offset)`` of a line start closest to ``offset`` from below."""
        with self._lock:
            slot = max(0, bisect_right(self._checkpoints, offset) - 1)
            return slot * LINES_PER_CHECKPOINT, self._checkpoints[slot]

    # -- the scan ----------------------------------------------------------------

    def _run(self) -> None:
        buffer = bytearray(CHUNK_BYTES)
        view = memoryview(buffer)
        try:
            while not self._cancelled.is_set():
                with self._lock:
                    position, target = self._indexed, self._target
                    if position >= target:
                        self._finished.set()
                        return
                got = os.preadv(self._fd, [view[: min(CHUNK_BYTES, target - position)]], position)
                if got == 0:
                    self._stop_at(position)
                    return
                self._absorb(buffer, got, position)
        except OSError:
            self._stop_at(self._indexed)
        finally:
            self._finished.set()

    def _absorb(self, buffer: bytearray, length: int, position: int) -> None:
        """Count one chunk's newlines, recording the checkpoints that fall inside it.

        The checkpoint searches themselves do the counting, so each byte is counted
        about once; a separate ``count`` of the chunk first would halve the speed.
        """
        with self._lock:
            seen = self._newlines
            next_line = len(self._checkpoints) * LINES_PER_CHECKPOINT
        new_checkpoints = []
        cursor = 0
        while True:
            at, found = find_nth_newline(buffer, next_line - seen, cursor, length, self._bytes_per_line)
            if at < 0:
                seen += found
                break
            new_checkpoints.append(position + at + 1)
            self._bytes_per_line = max(1.0, (at + 1 - cursor) / (next_line - seen))
            seen = next_line
            cursor = at + 1
            next_line += LINES_PER_CHECKPOINT
        with self._lock:
            self._checkpoints.extend(new_checkpoints)
            self._newlines = seen
            self._indexed = position + length
            self._ends_with_newline = buffer[length - 1] == 0x0A

    def _stop_at(self, position: int) -> None:
        """The file shrank under the scan: the index ends where the data ended."""
        with self._lock:
            self._target = position
