"""Errors raised when a spill file cannot be read.

One exception type for every "this path is not a readable regular file" case, so callers
(the CLI, the TUI, the audit) can show a one-line message naming the file without
catching half a dozen ``OSError`` subclasses themselves.
"""

from __future__ import annotations

import os


class SpillFileError(Exception):
    """A spill file is missing, unreadable, a directory or otherwise not pageable."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")
