"""Read a spill file a session names, for its raw output: contained, regular files only, capped.

The path comes from the session (hostile): it is looked up the way the spill audit looks it up
(`doctor.spill.resolve.SpillLocator`: beside the recording, under `--spill-root`, under the agent's
own temp folder), must resolve inside one of those roots with no symlink on the way, is opened
`O_NOFOLLOW | O_NONBLOCK` (a FIFO never blocks the replay) and must be a regular file no larger than
MAX_SPILL_BYTES. Anything else is a reason, never an exception: the result is then unknown.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from doctor.sources.base import LoadedSession, os_error_reason
from doctor.spill.pointers import SpillPointer
from doctor.spill.resolve import SpillLocator

# Qwen persists at most 50 MiB per result; a shell's `.output` file has no cap of its own. A replay
# reads at most this much of one file, and the whole run at most MAX_TOTAL_BYTES.
MAX_SPILL_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 1024 * 1024 * 1024


class SpillReader:
    """Opens the spill files of one session; `read(path)` gives (text, None) or (None, why)."""

    def __init__(self, session: LoadedSession, spill_roots: Iterable[Path] = ()):
        self._agent = session.agent
        self._locator = SpillLocator(session.path, spill_roots=list(spill_roots), session_roots=session.spill_roots)
        self._total = 0

    def read(self, written: str) -> tuple[str | None, str | None]:
        resolution = self._locator.resolve(SpillPointer(self._agent, "whatif", written))
        if not resolution.exists:
            return None, f"its spill file {written} is not here (pass --spill-root DIR if it was moved)"
        if resolution.is_symlink or not resolution.inside:
            return None, f"its spill file {written} resolves outside the session's spill folders; not read"
        try:
            descriptor = os.open(resolution.found, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            return None, f"its spill file {written}: {os_error_reason(exc)}"
        try:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode):
                return None, f"its spill file {written} is not a regular file"
            if info.st_size > MAX_SPILL_BYTES:
                return None, f"its spill file {written} is larger than doctor reads ({MAX_SPILL_BYTES >> 20} MiB)"
            if self._total + info.st_size > MAX_TOTAL_BYTES:
                return None, f"the replay already read {MAX_TOTAL_BYTES >> 30} GiB of spill files"
            data = _read_all(descriptor, info.st_size)
        except OSError as exc:
            return None, f"its spill file {written}: {os_error_reason(exc)}"
        finally:
            os.close(descriptor)
        self._total += len(data)
        try:
            return data.decode("utf-8"), None
        except UnicodeDecodeError:
            # The agent wrote a JS string as UTF-8; bytes that do not decode are not its text.
            return None, f"its spill file {written} is not valid UTF-8"


def _read_all(descriptor: int, size: int) -> bytes:
    chunks = []
    left = size + 1  # one byte more than announced: a file that grew is read to the cap, not beyond
    while left > 0:
        chunk = os.read(descriptor, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > size:
        raise OSError(0, "the file changed while it was read")
    return data
