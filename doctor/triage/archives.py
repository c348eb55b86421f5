"""Tar and zip archives of sessions or reports, as support receives them: list and extract members.

Members are streamed to a file the job owns (never into memory, never to a path the
archive names, so `../` or absolute member names cannot write anywhere else).
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from pathlib import Path

SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MEMBER_SUFFIXES = (".json", ".jsonl")


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(SUFFIXES)


def members(path: Path) -> list[str]:
    """Names of the regular `.json`/`.jsonl` members, in archive order (raises OSError or ValueError)."""
    if zipfile.is_zipfile(path) or path.name.lower().endswith(".zip"):
        try:  # a file named .zip is judged as a zip: tar's complaint about it would only confuse
            with zipfile.ZipFile(path) as archive:
                return [info.filename for info in archive.infolist()
                        if not info.is_dir() and info.filename.lower().endswith(MEMBER_SUFFIXES)]
        except zipfile.BadZipFile as exc:
            raise ValueError(f"not a readable zip archive ({exc})") from None
    try:
        with tarfile.open(path) as archive:
            return [info.name for info in archive if info.isfile() and info.name.lower().endswith(MEMBER_SUFFIXES)]
    except tarfile.TarError as exc:
        raise ValueError(f"not a readable tar or zip archive ({_cause(path, exc)})") from None


_COMPRESSION = {".gz": "gz", ".tgz": "gz", ".bz2": "bz2", ".tbz2": "bz2", ".xz": "xz", ".txz": "xz"}


def _cause(path: Path, exc: tarfile.TarError) -> str:
    """One line: tarfile's auto-detection lists every method it tried, one per line; keep the one the
    file's name asks for (plain tar when it names no compression)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    wanted = _COMPRESSION.get(Path(path).suffix.lower(), "tar")
    tried = [line[len("- method "):] for line in lines if line.startswith("- method ")]
    chosen = next((line for line in tried if line.startswith(f"{wanted}:")), tried[-1] if tried else None)
    return chosen or " ".join(lines)


def extract_member(path: str, member: str, target: Path) -> None:
    """Copy one member's bytes to `target`."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive, archive.open(member) as source, open(target, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        return
    with tarfile.open(path) as archive:
        source = archive.extractfile(member)
        if source is None:
            raise OSError(f"{member} is not a regular file in the archive")
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
