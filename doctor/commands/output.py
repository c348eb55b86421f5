"""Where a command's report goes: stdout, or the file `--output` names (doctor/safety/writes.py: mode
0600, a new file renamed over the name, never written through a link or over another user's file)."""

from __future__ import annotations

import codecs
import os
import sys
from pathlib import Path


def emit(text: str | bytes, output: Path | None) -> str | None:
    """A command's report to `output` (0600) or to stdout; the one-line reason if the file could not be written.
    `text` may be UTF-8 bytes (a megabyte of JSON need not be decoded to be printed)."""
    if not output:
        if isinstance(text, bytes):
            _write_utf8(text)
        else:
            sys.stdout.write(text)
        return None
    from doctor.safety.writes import write_private

    try:
        write_private(output, text)
    except OSError as exc:
        return f"{output}: {exc.strerror or exc}"
    return None


def _write_utf8(data: bytes) -> None:
    """UTF-8 `data` to stdout as `sys.stdout.write(data.decode())` would put it there: straight to the byte
    stream when stdout writes UTF-8 and translates no newline, else through the text layer."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    encoding = getattr(stream, "encoding", None)
    if buffer is None or os.linesep != "\n" or not encoding or codecs.lookup(encoding).name != "utf-8":
        stream.write(data.decode("utf-8"))
        return
    stream.flush()
    buffer.write(data)
    buffer.flush()
