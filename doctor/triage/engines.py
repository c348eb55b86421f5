"""The engines that run the per-file job: a local process pool (default) or a Dask cluster.

Each file is an independent job and only the main process writes the database, so
an engine is just "map `scan_file` over jobs, yield outcomes as they finish". The
local pool uses the forkserver start method: workers start from a clean process,
not a fork of one holding DuckDB's threads.
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


def run_local(jobs: list[FileJob], workers: int | None = None) -> Iterator[FileOutcome]:
    workers = workers or default_workers()
    if workers == 1 or len(jobs) <= 1:
        yield from map(scan_file, jobs)
        return
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["doctor.triage.job"])
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context, initializer=_ignore_ctrl_c)
    try:
        futures = [pool.submit(scan_file, job) for job in jobs]
        for future in as_completed(futures):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _ignore_ctrl_c() -> None:
    """Ctrl-C reaches the whole process group; the main process alone decides what it means
    (stop handing out files, let running ones finish, keep the database consistent)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_dask(jobs: Iterable[FileJob], scheduler: str) -> Iterator[FileOutcome]:
    """The same job on a Dask cluster (`dask.distributed`); workers must see the files at the same paths."""
    from distributed import Client, as_completed as dask_completed

    try:
        client = Client(scheduler, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as exc:
        raise EngineError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    with client:
        pending = dask_completed(client.map(scan_file, list(jobs), pure=False))
        for future in pending:
            outcome = future.result()
            future.release()  # the cluster forgets the outcome once the database has it
            yield outcome
