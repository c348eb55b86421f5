"""The engines that run the per-file job: a local process pool (default) or a Dask cluster.

Each file is an independent job and only the main process writes the database, so
an engine is just "map `scan_file` over jobs, yield outcomes as they finish". The
local pool uses the forkserver start method: workers start from a clean process,
not a fork of one holding DuckDB's threads. An engine is opened before the database
is: a scheduler that does not answer fails the scan before anything is written.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from doctor.triage.job import scan_file
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


class LocalPool:
    """A process pool on this machine (all cores unless told)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()

    def run(self, jobs: list[FileJob]) -> Iterator[FileOutcome]:
        if self.workers == 1 or len(jobs) <= 1:
            yield from map(scan_file, jobs)
            return
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["doctor.triage.job"])
        pool = ProcessPoolExecutor(max_workers=min(self.workers, len(jobs)), mp_context=context,
                                   initializer=_ignore_ctrl_c)
        try:
            futures = [pool.submit(scan_file, job) for job in jobs]
            for future in as_completed(futures):
                yield future.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        pass


def _ignore_ctrl_c() -> None:
    """Ctrl-C reaches the whole process group; the main process alone decides what it means
    (stop handing out files, let running ones finish, keep the database consistent)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class DaskCluster:
    """The same job on a Dask cluster (`dask.distributed`); workers must see the files at the same paths.
    Connecting is the constructor's work, so an unreachable scheduler fails before the database opens."""

    name = "dask"

    def __init__(self, scheduler: str):
        from distributed import Client

        try:
            self.client = Client(scheduler, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError) as exc:
            raise EngineError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None

    def run(self, jobs: Iterable[FileJob]) -> Iterator[FileOutcome]:
        from distributed import as_completed as dask_completed

        # with_results: outcomes are gathered in the background as tasks finish, not fetched one
        # round trip at a time (that made a 2,000-file scan 1.85x the local pool's time)
        pending = dask_completed(self.client.map(scan_file, list(jobs), pure=False), with_results=True)
        for future, outcome in pending:
            future.release()  # the cluster forgets the outcome once the database has it
            yield outcome

    def close(self) -> None:
        self.client.close()


def open_engine(name: str, *, workers: int | None = None, scheduler: str | None = None):
    """The engine `--engine` names, ready to run jobs (EngineError when it cannot be)."""
    if name == "dask":
        return DaskCluster(scheduler)
    return LocalPool(workers)
