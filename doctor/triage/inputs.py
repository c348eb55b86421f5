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


def shown(path: Path, style: str, member: str | None = None) -> str:
    """The path as stored: per --paths; an archive member as `archive!member`."""
    text = present_path(path, style)
    if member is None:
        return text
    return f"{text}!{present_path(member, 'hash') if style == 'hash' else member}"


EMPTY_FOLDER = ("no session files, reports or archives in this folder "
                "(doctor scan reads .json/.jsonl files and tar/zip archives, at any depth)")


def expand(arguments: list[str], use_all: bool = False, env=os.environ, empty: list | None = None) -> list[Path]:
    """Every file to scan (absolute, no duplicates, in a stable order); InputError for a PATH naming nothing.
    A folder holding nothing to scan is appended to `empty` (the caller says so; alone it is an InputError)."""
    found: dict[Path, None] = {}
    for argument in arguments:
        path = Path(argument).expanduser()
        if path.is_dir():
            files = _walk(path)
            if not files and empty is not None:
                empty.append(argument)
            found.update(dict.fromkeys(files))
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
