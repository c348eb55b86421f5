"""How paths appear in reports: `--paths short|full|hash`.

Reports get pasted into tickets; a full path can name a user, a customer or a
project. The default shortens; `hash` keeps paths comparable without revealing them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PATH_STYLES = ("short", "full", "hash")
# An absolute POSIX path of two parts or more inside free text (not the tail of a word or URL).
_PATH_IN_TEXT = re.compile(r"(?<![\w/~.:-])/(?:[^\s/'\"`<>|;,()\[\]{}]+/)+[^\s/'\"`<>|;,()\[\]{}]*")


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
        import hashlib  # here: loading OpenSSL costs the status line's start-up, which hashes nothing

        suffix = Path(text).suffix
        return f"sha256:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}{suffix}"
    if not os.path.isabs(text):
        return text  # relative to where the user stands: reveals nothing more
    home = os.path.expanduser("~")  # what Path.home() is, without making Paths (a scan shows thousands)
    if home != "/" and text.startswith(home + os.sep):
        text = "~" + text[len(home) :]
    if text.count(os.sep) < 4:  # four parts at most
        return text
    parts = Path(text).parts
    if len(parts) > 4:
        text = os.path.join(parts[0] if parts[0] in ("~", "/") else "…", "…", *parts[-2:])
    return text


def paths_in_text(text: str, style: str = "short") -> str:
    """Absolute paths inside free text (a preview of tool output) shown in `style`, like every other path.

    A stub says "Full output saved to: /home/ana/.qwen/tmp/<hash>/tool-results/x.txt": with
    --paths short or hash that must not print the full path the rest of the report hides.
    """
    if style == "full":
        return text

    def shown(match: re.Match) -> str:
        path = match.group(0)
        core = path.rstrip(".:")  # the end of a sentence is not part of the file name
        return present_path(core, style) + path[len(core):]

    return _PATH_IN_TEXT.sub(shown, text)


def project_hash(project: str | os.PathLike | None) -> str | None:
    """A project named without revealing it: the first 16 hex digits of sha256 of its path."""
    if not project:
        return None
    import hashlib

    return hashlib.sha256(os.fspath(project).encode("utf-8", "surrogatepass")).hexdigest()[:16]
