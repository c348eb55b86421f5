"""What `doctor scan PATH… [--all]` means in files: folders walked, globs expanded, archives opened.

A folder contributes its `.json`/`.jsonl` files and archives, at any depth (spill
files, notes and the like are not sessions and are not tried). A file named
directly is always tried, whatever its name. Each file gets a stable key (a digest
of its absolute path, and of the member inside an archive) that incremental
re-scans match on, and the path the database shows (`--paths`).

A folder may be a stranger's: only regular files are tried. A FIFO would block the
scan forever when opened, a device could be a tape or a terminal, a socket cannot be
read; a symlink below the folder could lead anywhere (`/etc/shadow`, another user's
home), so it is not followed. Each of those, and a subfolder that cannot be read, is
a `LeftOut` with its reason: the scan records it as skipped instead of leaving it out
in silence. A path the user names (or a glob matches) is followed if it is a link, as
`cat` would, but it too must be a regular file or a folder.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from doctor.report.paths import present_path
from doctor.triage.archives import MEMBER_SUFFIXES, is_archive

GLOB_CHARS = frozenset("*?[")


class InputError(Exception):
    """A PATH argument that names nothing."""


@dataclass(frozen=True)
class LeftOut:
    """A path the scan does not open, and why (recorded as a skipped file)."""

    path: Path
    reason: str

    def __fspath__(self) -> str:
        """Its path, so that a file key (and "was it seen?" when marking files gone) treats it as the file."""
        return os.fspath(self.path)


def file_key(path: Path, member: str | None = None) -> str:
    text = os.fspath(path) if member is None else f"{os.fspath(path)}\0{member}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


FOLDER_KEY_CHARS = 16


def folder_key(path: Path) -> str:
    """A short digest of a folder's absolute path (the database stores no path it was not told to)."""
    return hashlib.blake2b(os.fspath(path).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def folder_keys(path: Path) -> str:
    """The keys of every folder holding `path` (absolute), innermost first, space-separated: a later
    scan of any of those folders knows the file was under it, and marks it gone when it is not
    there any more."""
    return _folder_keys(os.fspath(path.parent))


@functools.lru_cache(maxsize=4096)
def _folder_keys(folder: str) -> str:
    """`folder`'s key and its parents' (the files of one folder share them: worked out once)."""
    parent = os.path.dirname(folder)
    return folder_key(folder) if parent == folder else f"{folder_key(folder)} {_folder_keys(parent)}"


def walked_folders(arguments: list[str]) -> set[str]:
    """The folder keys of the folders a scan of `arguments` walks whole (folders, and globs' folders):
    a file an earlier scan saw under one of them and this scan did not is gone."""
    folders = set()
    for argument in arguments:
        path = Path(argument).expanduser()
        candidates = [path] if path.is_dir() or not GLOB_CHARS & set(argument) else [
            Path(match) for match in glob.glob(os.path.expanduser(argument), recursive=True)]
        folders.update(folder_key(candidate.absolute()) for candidate in candidates if candidate.is_dir())
    return folders


def shown(path: Path, style: str, member: str | None = None) -> str:
    """The path as stored: per --paths; an archive member as `archive!member`."""
    text = present_path(path, style)
    if member is None:
        return text
    return f"{text}!{present_path(member, 'hash') if style == 'hash' else member}"


EMPTY_FOLDER = ("no session files, reports or archives in this folder "
                "(doctor scan reads .json/.jsonl files and tar/zip archives, at any depth)")


def expand(arguments: list[str], use_all: bool = False, env=os.environ,
           empty: list | None = None) -> list[Path | LeftOut]:
    """Every file to scan (absolute, no duplicates, in a stable order) and every one left out with its
    reason; InputError for a PATH naming nothing. A folder holding nothing to scan is appended to
    `empty` (the caller says so; alone it is a usage error)."""
    found: dict[Path | LeftOut, None] = {}
    for argument in arguments:
        path = Path(argument).expanduser()
        if path.is_dir():
            files = _walk(path)
            if not files and empty is not None:
                empty.append(argument)
            found.update(dict.fromkeys(files))
        elif path.exists():
            found[_named(path)] = None
        elif GLOB_CHARS & set(argument):
            matches = sorted(glob.glob(os.path.expanduser(argument), recursive=True))
            if not matches:
                raise InputError(f"{argument}: no file matches this pattern")
            for match in matches:
                match_path = Path(match)
                found.update(dict.fromkeys(_walk(match_path) if match_path.is_dir() else [_named(match_path)]))
        else:
            raise InputError(f"{argument}: no such file or directory")
    if use_all:
        from doctor.sources.discovery import find_sessions

        found.update(dict.fromkeys(_named(ref.path) for ref in find_sessions(env=env)))
    return list(found)


def _named(path: Path) -> Path | LeftOut:
    """A file the user named: links followed, but only a regular file is opened."""
    path = path.absolute()
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return LeftOut(path, f"cannot read: {exc.strerror or exc}")
    return path if stat.S_ISREG(mode) else LeftOut(path, _not_regular(mode))


def _not_regular(mode: int) -> str:
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
    return f"not a regular file ({kind}; never opened)"


def _wanted(name: str) -> bool:
    return name.lower().endswith(MEMBER_SUFFIXES) or is_archive(Path(name))


def _walk(root: Path) -> list[Path | LeftOut]:
    """The folder's session-like files at any depth, in name order; links, special files and
    folders that cannot be listed as LeftOut. Entry types come from the folder listing itself
    (`lstat`, never following a link), so nothing is opened to find out what it is."""
    files: list[Path | LeftOut] = []
    pending = [root.absolute()]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            files.append(LeftOut(directory, f"cannot read this folder: {exc.strerror or exc}"))
            continue
        subfolders = []
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    if _wanted(entry.name) or entry.is_dir(follow_symlinks=True):
                        files.append(LeftOut(path, "a symbolic link inside a scanned folder (not followed)"))
                elif entry.is_dir(follow_symlinks=False):
                    subfolders.append(path)
                elif _wanted(entry.name):
                    mode = entry.stat(follow_symlinks=False).st_mode
                    files.append(path if stat.S_ISREG(mode) else LeftOut(path, _not_regular(mode)))
            except OSError as exc:
                files.append(LeftOut(path, f"cannot read: {exc.strerror or exc}"))
        pending.extend(reversed(subfolders))
    return files
