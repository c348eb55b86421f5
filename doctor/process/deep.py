"""Deep sizes with pympler: what the live history really costs, and which types fill memory.

`asizeof` walks every object reachable from the history at roughly 13 µs per object, so a
long session takes seconds. That is why it only runs when asked, and why `deep_size_async`
runs it on a worker thread that reports progress and can be cancelled between entries.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Callable

from pympler import asizeof, muppy, summary

from doctor.process.model import DeepSize, TypeSummaryRow

ProgressCallback = Callable[[int, int], None]

# Progress is reported at most this often, so a history of 100,000 small entries does not
# flood a UI with 100,000 callbacks.
PROGRESS_INTERVAL_SECONDS = 0.1

TOP_TYPES = 10


def measure_deep_size(
    history: object,
    *,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> DeepSize:
    """Size `history` and everything it references, each shared object counted once.

    A sequence is sized entry by entry with one `Asizer`, which remembers what it has seen, so
    the sum equals `asizeof(history)` while leaving room to report progress and to stop.
    The container itself is sized last, when its entries are already counted. `on_progress`
    gets `(entries_done, entries_total)` and runs on the measuring thread.

    The history is read, never copied or changed; if the host mutates an entry while it is
    being walked, pympler may raise `RuntimeError`, which propagates.
    """
    started = time.perf_counter()
    entries = _entries_of(history)
    sizer = asizeof.Asizer()
    total_bytes = 0
    last_report = started
    for done, entry in enumerate(entries):
        if should_stop():
            elapsed = time.perf_counter() - started
            return DeepSize(total_bytes, done, len(entries), elapsed, complete=False)
        total_bytes += sizer.asizeof(entry)
        now = time.perf_counter()
        if on_progress is not None and now - last_report >= PROGRESS_INTERVAL_SECONDS:
            on_progress(done + 1, len(entries))
            last_report = now
    total_bytes += sizer.asizeof(history)
    if on_progress is not None:
        on_progress(len(entries), len(entries))
    elapsed = time.perf_counter() - started
    return DeepSize(total_bytes, len(entries), len(entries), elapsed, complete=True)


def _entries_of(history: object) -> tuple:
    """The entries to size one at a time: a sequence's items, or the history as one piece."""
    if isinstance(history, Sequence) and not isinstance(history, (str, bytes)):
        return tuple(history)
    return (history,)


class DeepSizeTask:
    """A deep-size measurement running on a daemon thread.

    `cancel()` asks it to stop before the next entry; `result()` then returns a partial
    `DeepSize` with `complete=False`. Exceptions raised while sizing re-raise from `result()`.
    """

    def __init__(self, history: object, on_progress: ProgressCallback | None) -> None:
        self._stop = threading.Event()
        self._future: Future[DeepSize] = Future()
        self._thread = threading.Thread(
            target=self._run, args=(history, on_progress), name="doctor-deep-size", daemon=True
        )
        self._thread.start()

    def _run(self, history: object, on_progress: ProgressCallback | None) -> None:
        try:
            size = measure_deep_size(
                history, on_progress=on_progress, should_stop=self._stop.is_set
            )
        except BaseException as error:  # handed to the caller of result()
            self._future.set_exception(error)
        else:
            self._future.set_result(size)

    def cancel(self) -> None:
        self._stop.set()

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None) -> DeepSize:
        """Wait for the measurement; `TimeoutError` if it is still running after `timeout`."""
        return self._future.result(timeout)


def deep_size_async(
    history: object, on_progress: ProgressCallback | None = None
) -> DeepSizeTask:
    """Start measuring the deep size of `history` on a worker thread and return at once."""
    return DeepSizeTask(history, on_progress)


def summarize_types(top: int = TOP_TYPES) -> tuple[TypeSummaryRow, ...]:
    """The `top` object types holding the most memory across the whole process.

    `muppy.get_objects()` lists every object the garbage collector can reach, which takes
    about half a second in a small interpreter and grows with the heap.
    """
    objects = muppy.get_objects()
    try:
        rows = summary.summarize(objects)
    finally:
        del objects
    rows.sort(key=lambda row: row[2], reverse=True)
    return tuple(
        TypeSummaryRow(type_name=name, count=count, bytes=size) for name, count, size in rows[:top]
    )
