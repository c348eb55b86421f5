"""The engines that run the per-file job: a local process pool (default) or a Dask cluster.

Each file is an independent job and only the main process writes the database, so
an engine is just "map `scan_batch` over tasks of a few files, yield each file's
outcome as its task finishes" (the main process commits them in groups). Closing
the generator early (a stop, an error) stops the workers and cancels what is left.
The local pool uses the forkserver start method: workers start from a clean process,
not a fork of one holding DuckDB's threads. An engine is opened before the database
is: a scheduler that does not answer fails the scan before anything is written.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from doctor.triage.job import scan_batch, scan_file
from doctor.triage.rows import FileJob, FileOutcome

ENGINES = ("local", "dask")
CONNECT_SECONDS = 10


class EngineError(Exception):
    """The engine cannot run the jobs (a Dask scheduler that does not answer)."""


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def batches(jobs: Iterable[FileJob], most_files: int, most_bytes: int) -> list[list[FileJob]]:
    """The jobs grouped into tasks of at most `most_files` files or `most_bytes` bytes (a larger file
    is a task alone), largest files first: the last tasks are the small ones, so no worker waits
    long at the end for another to finish a big file. The sort is stable: jobs of equal size
    (archive members) keep their order."""
    tasks: list[list[FileJob]] = []
    task: list[FileJob] = []
    task_bytes = 0
    for job in sorted(jobs, key=lambda job: -job.size):
        if task and (len(task) == most_files or task_bytes + job.size > most_bytes):
            tasks.append(task)
            task, task_bytes = [], 0
        task.append(job)
        task_bytes += job.size
    if task:
        tasks.append(task)
    return tasks


class LocalPool:
    """A process pool on this machine (all cores unless told). A task costs the pool little, so tasks
    are small: the first files reach the database soon after the scan starts."""

    name = "local"
    task_files, task_bytes = 4, 4 << 20

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()
        self._pool: ProcessPoolExecutor | None = None
        self._stop = None

    def prepare(self) -> None:
        """Start the worker processes now, while the main process is still planning (the plan calls this
        once it has two files to read): they start and import doctor meanwhile, not after the plan, when
        they would leave the cores idle for a second. Does nothing when the pool is started, or has one
        worker."""
        if self._pool is not None or self.workers == 1:
            return
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["doctor.triage.engines"])
        self._stop = context.Event()
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context, initializer=_start_worker,
                                         initargs=(self._stop,))
        with _ctrl_c_ignored():  # the pool's processes start now and inherit the ignoring
            for _ in range(self.workers):  # a task each: the pool starts a process per task while none is idle
                self._pool.submit(_ready)

    def run(self, jobs: list[FileJob]) -> Iterator[FileOutcome]:
        if self._pool is None and (self.workers == 1 or len(jobs) <= 1):
            yield from map(scan_file, jobs)
            return
        self.prepare()
        pool, stop = self._pool, self._stop
        finished = False
        try:
            with _ctrl_c_ignored():
                futures = [pool.submit(_scan_until_stopped, task)
                           for task in batches(jobs, self.task_files, self.task_bytes)]
            for future in as_completed(futures):
                yield from future.result()
            finished = True
        finally:
            if not finished:  # stopped (a signal, an error): no worker outlives the scan
                _stop_workers(pool, stop)
            pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        """A pool started for a plan that never ran (stopped, failed) ends with the scan."""
        if self._pool is not None:
            _stop_workers(self._pool, self._stop)
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _ready() -> None:
    """A task that does nothing: submitting one makes the pool start a worker process."""


STOP_GRACE_SECONDS = 5.0  # a worker still inside one file after this is killed

_stop_requested = None  # in a worker: the pool's stop Event (set by _start_worker)


def _start_worker(stop) -> None:
    """A pool worker's start. Ctrl-C, SIGTERM and SIGHUP may reach the whole process group (a terminal,
    systemd, a closed terminal); the main process alone decides what they mean (commit the finished
    files, then stop the workers itself). A worker that died of the signal halfway through sending its
    outcomes would leave a torn message in the result pipe, on which the pool's manager thread then
    waits for ever (it holds the pipe's other end itself): the scan hung on Ctrl-C in CI that way."""
    global _stop_requested
    _stop_requested = stop
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    _end_with_the_parent()


def _end_with_the_parent() -> None:
    """Die with the scan's main process: a scan killed outright (SIGKILL, the OOM killer) would otherwise leave
    its workers waiting for work for ever (they ignore the signals a user would send, and they keep the
    forkserver alive). `parent_process().sentinel` becomes ready when the main process is gone."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_when_gone, args=(parent.sentinel,), daemon=True).start()


def _exit_when_gone(sentinel) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def _scan_until_stopped(jobs: list[FileJob]) -> list[FileOutcome]:
    """`scan_batch`, ending early between two files once the scan is stopping (the outcomes so far are
    sent whole, and then ignored)."""
    outcomes = []
    for job in jobs:
        if _stop_requested is not None and _stop_requested.is_set():
            break
        outcomes.append(scan_file(job))
    return outcomes


def _stop_workers(pool: ProcessPoolExecutor, stop) -> None:
    """End the workers without tearing a message: ask them to stop after their current file, cancel the
    tasks not started, let the pool send its workers their end, and kill only a worker still busy
    after STOP_GRACE_SECONDS (one huge file). Killing one while it sends is what hung the pool; a
    worker still reading a file that long is all but certainly not sending."""
    stop.set()
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()


@contextlib.contextmanager
def _ctrl_c_ignored():
    """Ctrl-C ignored while the pool starts its processes, so they are born ignoring it. The
    forkserver imports doctor before it ignores Ctrl-C itself, so one pressed then printed its
    traceback (the initializer above only runs once a worker is up); holding the signal back
    instead only moved the traceback to a worker still starting when the pool shut down. A
    Ctrl-C in this short window (the first tenth of a second or so) is dropped."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler (and only it gets Ctrl-C)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class DaskCluster:
    """The same job on a Dask cluster (`dask.distributed`); workers must see the files at the same paths.
    Connecting is the constructor's work, so an unreachable scheduler fails before the database opens.

    A Dask task costs milliseconds of scheduler, worker and client time: one task per file made a
    2,000-file scan 1.4-1.7x the local pool's time (1.2-1.5x with these tasks, benchmarks/RESULTS-scan.md).
    Tasks of up to 32 files or 16 MB keep that to one per ~16 MB read."""

    name = "dask"
    task_files, task_bytes = 32, 16 << 20

    def __init__(self, scheduler: str):
        from distributed import Client

        try:
            self.client = Client(scheduler, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError) as exc:
            raise EngineError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None

    def prepare(self) -> None:
        """The cluster's workers are running already."""

    def run(self, jobs: Iterable[FileJob]) -> Iterator[FileOutcome]:
        from distributed import as_completed as dask_completed

        # with_results: outcomes are gathered in the background as tasks finish, not fetched one
        # round trip at a time (that made a 2,000-file scan 1.85x the local pool's time)
        tasks = batches(jobs, self.task_files, self.task_bytes)
        futures = self.client.map(scan_batch, tasks, pure=False)
        try:
            for future, outcomes in dask_completed(futures, with_results=True):
                future.release()  # the cluster forgets the outcomes once the database has them
                yield from outcomes
        finally:
            unfinished = [future for future in futures if not future.done()]
            if unfinished:  # a stopped scan leaves no task running on the cluster
                self.client.cancel(unfinished)

    def close(self) -> None:
        self.client.close()


def open_engine(name: str, *, workers: int | None = None, scheduler: str | None = None):
    """The engine `--engine` names, ready to run jobs (EngineError when it cannot be)."""
    if name == "dask":
        return DaskCluster(scheduler)
    return LocalPool(workers)
