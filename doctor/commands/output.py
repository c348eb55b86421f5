"""Where a command's report goes: stdout, or the file `--output` names (doctor/safety/writes.py: mode
0600, a new file renamed over the name, never written through a link or over another user's file)."""

from __future__ import annotations

import sys
from pathlib import Path


def emit(text: str, output: Path | None) -> str | None:
    """A command's report to `output` (0600) or to stdout; the one-line reason if the file could not be written."""
    if not output:
        sys.stdout.write(text)
        return None
    from doctor.safety.writes import write_private

    try:
        write_private(output, text)
    except OSError as exc:
        return f"{output}: {exc.strerror or exc}"
    return None
