"""How paths appear in reports: `--paths short|full|hash`.

Reports get pasted into tickets; a full path can name a user, a customer or a
project. The default shortens; `hash` keeps paths comparable without revealing them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

PATH_STYLES = ("short", "full", "hash")


def present_path(path: str | os.PathLike | None, style: str = "short") -> str | None:
    """A path as the user chose to show it: full, shortened (home as ~, last parts), or hashed.

    Hashes keep the file name's extension so support can still tell kinds apart.
    """
    if path is None:
        return None
    text = os.fspath(path)
    if style == "full":
        return text
    if style == "hash":
        suffix = Path(text).suffix
        return f"sha256:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}{suffix}"
    if not os.path.isabs(text):
        return text  # relative to where the user stands: reveals nothing more
    home = str(Path.home())
    if home != "/" and text.startswith(home + os.sep):
        text = "~" + text[len(home) :]
    parts = Path(text).parts
    if len(parts) > 4:
        text = os.path.join(parts[0] if parts[0] in ("~", "/") else "…", "…", *parts[-2:])
    return text


def project_hash(project: str | os.PathLike | None) -> str | None:
    """A project named without revealing it: the first 16 hex digits of sha256 of its path."""
    if not project:
        return None
    return hashlib.sha256(os.fspath(project).encode("utf-8", "surrogatepass")).hexdigest()[:16]
