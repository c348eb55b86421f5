"""What `doctor scan PATH… [--all]` means in files: folders walked, globs expanded, archives opened.

A folder contributes its `.json`/`.jsonl` files and archives, at any depth (spill
files, notes and the like are not sessions and are not tried). A file named
directly is always tried, whatever its name. Each file gets a stable key (a digest
of its absolute path, and of the member inside an archive) that incremental
re-scans match on, and the path the database shows (`--paths`).
"""

from __future__ import annotations

import glob
import hashlib
import os
from pathlib import Path

from doctor.report.paths import present_path
from doctor.triage.archives import MEMBER_SUFFIXES, is_archive

GLOB_CHARS = frozenset("*?[")


class InputError(Exception):
    """A PATH argument that names nothing."""


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
    return " ".join(folder_key(parent) for parent in path.parents)


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


def expand(arguments: list[str], use_all: bool = False, env=os.environ) -> list[Path]:
    """Every file to scan (absolute, no duplicates, in a stable order); InputError for a PATH naming nothing."""
    found: dict[Path, None] = {}
    for argument in arguments:
        path = Path(argument).expanduser()
        if path.is_dir():
            found.update(dict.fromkeys(_walk(path)))
        elif path.exists():
            found[path.absolute()] = None
        elif GLOB_CHARS & set(argument):
            matches = sorted(glob.glob(os.path.expanduser(argument), recursive=True))
            if not matches:
                raise InputError(f"{argument}: no file matches this pattern")
            for match in matches:
                match_path = Path(match)
                found.update(dict.fromkeys(_walk(match_path) if match_path.is_dir() else [match_path.absolute()]))
        else:
            raise InputError(f"{argument}: no such file or directory")
    if use_all:
        from doctor.sources.discovery import find_sessions

        found.update(dict.fromkeys(ref.path.absolute() for ref in find_sessions(env=env)))
    return list(found)


def _walk(root: Path) -> list[Path]:
    files = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories.sort()
        for name in sorted(names):
            if name.lower().endswith(MEMBER_SUFFIXES) or is_archive(Path(name)):
                files.append(Path(directory, name).absolute())
    return files
