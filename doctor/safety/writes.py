"""Private atomic writes: a file appears whole, 0600, and never through a link someone planted.

The data goes to a temporary file created beside the target with `O_CREAT|O_EXCL|O_NOFOLLOW`
(a name nobody had, so no existing file or symlink is opened), then `rename`d over the target in
one step: a reader sees the old file or the new one, never half of one, and a symlink at the
target's name is replaced, not followed. Relative to a folder descriptor (`dir_fd`), so a folder
checked once stays the folder written into even if its path is changed meanwhile.
"""

from __future__ import annotations

import os

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def write_atomic_at(folder: int, name: str, data: bytes) -> None:
    """Replace `name` in the open folder `folder` with `data`, mode 0600, in one step."""
    temporary = f".{name}.{os.getpid()}.{os.urandom(6).hex()}"
    descriptor = os.open(temporary, _CREATE, 0o600, dir_fd=folder)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise
