"""A progress bar on stderr while a big session is read, for reports printed to a terminal.

Readers stream the file themselves, so the bar watches the file offset of the
descriptor they opened (`/proc/self/fdinfo`, Linux) instead of threading a callback
through every reader; elsewhere it shows elapsed time only. It appears only when
the read takes longer than a second and stderr is a terminal, and it is erased
when done, so piped output and quick reads stay clean.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SHOW_AFTER_SECONDS = 1.0
POLL_SECONDS = 0.1


def read_offset(path: Path) -> int | None:
    """How far this process has read `path`: the largest offset among its open descriptors on it."""
    target = os.path.realpath(path)
    offsets = []
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for fd in descriptors:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != target:
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                offsets.extend(int(line.split()[1]) for line in info if line.startswith("pos:"))
        except (OSError, ValueError, IndexError):
            continue
    return max(offsets) if offsets else None


@contextmanager
def reading_progress(path: Path | None, *, stream=None, delay: float = SHOW_AFTER_SECONDS) -> Iterator[None]:
    """Show a transient bar for `path` on `stream` (stderr) if the block runs longer than `delay`."""
    stream = sys.stderr if stream is None else stream
    if path is None or not stream.isatty():
        yield
        return
    try:
        size = Path(path).stat().st_size
    except OSError:
        size = None
    finished = threading.Event()

    def show() -> None:
        if finished.wait(delay):
            return
        # Only now: a report printed after a quick read (or to a pipe) never pays for importing rich.
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=stream, force_terminal=True)
        columns = [TextColumn("Reading {task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn()]
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task(Path(path).name, total=size)
            while not finished.wait(POLL_SECONDS):
                offset = read_offset(Path(path))
                if offset is not None:
                    progress.update(task, completed=offset)

    watcher = threading.Thread(target=show, name="doctor-read-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join()
