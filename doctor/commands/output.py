"""Report files written for the user: created 0600, since reports may name paths and tools."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    """Report files may name paths and tools: create them 0600, never widen an existing file."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o600)


def emit(text: str, output: Path | None) -> str | None:
    """A command's report to `output` (0600) or to stdout; the one-line reason if the file could not be written."""
    if not output:
        sys.stdout.write(text)
        return None
    try:
        write_private(output, text)
    except OSError as exc:
        return f"{output}: {exc.strerror or exc}"
    return None
