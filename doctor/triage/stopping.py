"""Ctrl-C, SIGTERM and SIGHUP stop a scan the same way: finished files are committed, workers end.

A terminal's Ctrl-C, `timeout`, cron and systemd's stop, or a closed terminal each ask the scan
to end. While a scan runs, each of these signals is only noted, and becomes a `Stopped`
exception (a KeyboardInterrupt, so every path that ends a scan on Ctrl-C ends it on these too)
where the main process waits for its workers (`while_waiting`) or checks (`check`). So a stop
never lands inside a group commit: the files finished so far are committed, then the scan ends.
Only the first signal is raised; the ones that follow while the scan winds down are the same
request. The process then exits with 128 + the signal's number (130, 143, 129), as a shell
reports a process the signal ended.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """The scan was asked to stop by `signum`."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class StopSignals:
    """The signals a scan has received, raised as `Stopped` only where it is safe to stop."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._raised = False
        self._waiting = False

    def _handle(self, signum, _frame) -> None:
        if self.received is None:
            self.received = signum
        if self._waiting:
            self.check()

    def check(self) -> None:
        """Raise `Stopped` when a signal came and was not raised yet."""
        if self.received is not None and not self._raised:
            self._raised = True
            raise Stopped(self.received)

    def while_waiting(self, outcomes: Iterable) -> Iterator:
        """`outcomes`, with a stop raised while the next one is awaited (the engine's generator is
        closed on the way out, which stops its workers). An engine that fails because the same
        signal reached its workers first (a whole process group or cgroup stopped) is the stop too."""
        iterator = iter(outcomes)
        try:
            while True:
                self.check()
                self._waiting = True
                try:
                    item = next(iterator)
                except StopIteration:
                    return
                except Exception:
                    self._waiting = False
                    self.check()
                    raise
                finally:
                    self._waiting = False
                yield item
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()


@contextlib.contextmanager
def handled():
    """A StopSignals in charge of SIGNALS for the block, the previous handlers restored after it (in
    the main thread only: elsewhere the process keeps its own, and Ctrl-C stays a KeyboardInterrupt).
    A signal noted but not raised inside the block (it came during the last commit) is raised at its end."""
    stops = StopSignals()
    if threading.current_thread() is not threading.main_thread():
        yield stops
        return
    previous = {signum: signal.signal(signum, stops._handle) for signum in SIGNALS}
    try:
        yield stops
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    stops.check()
