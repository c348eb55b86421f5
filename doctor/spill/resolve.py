"""Find the file a pointer names, on this machine, and decide whether it may be opened.

Pointers hold absolute paths from the machine that recorded the session. For support
triage the dump arrives elsewhere with its spill files beside it (`<dump dir>/tmp/…`,
`<dump dir>/<session id>/tool-results/…`) or in a directory the user names with
`--spill-root`. So a pointer is looked up, in order: under each explicit spill root,
next to the dump, under the roots the reader derived from the dump's location (each
by the longest suffix of the written path that exists), and last as written. Copies
beside the dump win because the written path may exist here yet belong to another run.

Containment: a spill file must stay under a root that legitimately holds spill files
(the base it was found under, the agent's own temp/session directory read off the
written path's layout, the reader's roots, the user's roots), judged on the real path
so a symlink cannot smuggle `/etc/passwd` or `~/.ssh/…` in. Nothing here opens a file:
`lexists` and `realpath` only look at directory entries.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from doctor.sources.autobot import default_roots
from doctor.spill.pointers import SpillPointer

# The directory each agent writes its spill files under, read off a written path.
_AGENT_ROOTS = (
    re.compile(r"^(.*/tmp/[0-9a-f]{64})/"),  # Qwen: <QWEN_HOME>/tmp/<sha256(project)>/
    re.compile(r"^(.*/[0-9a-fA-F-]{36}/tool-results)/"),  # Claude: <project>/<session id>/tool-results/
    re.compile(r"^(.*/tool-outputs/session-[^/]+)/"),  # Gemini: <project temp>/tool-outputs/session-<id>/
)


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a pointer's file is here (None when missing) and under which root it must stay."""

    pointer: SpillPointer
    found: Path | None
    real: Path | None
    remapped: bool
    roots: tuple[Path, ...]
    searched: int

    @property
    def exists(self) -> bool:
        return self.found is not None

    @property
    def is_symlink(self) -> bool:
        return self.found is not None and self.real is not None and os.path.abspath(self.found) != str(self.real)

    @property
    def inside(self) -> bool:
        """The real path is under one of the roots (a missing file is trivially inside)."""
        return self.real is None or any(is_within(self.real, root) for root in self.roots)

    def to_json(self) -> dict:
        return {
            "found": str(self.found) if self.found else None,
            "realPath": str(self.real) if self.real else None,
            "remapped": self.remapped,
            "inside": self.inside,
        }


def is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def written_parts(path: str) -> tuple[str, ...]:
    """The components of a written path, Windows or POSIX, without the anchor.

    A POSIX path's are what `PurePosixPath(path).parts` holds after its anchor ("/" or "//"): the
    non-empty names between slashes other than ".", split here without building the path object
    (tests/spill/test_audit_shortcuts.py holds the two equal)."""
    if "\\" in path and "/" not in path:
        pure = PureWindowsPath(path)
        return tuple(part for part in pure.parts if part not in (pure.anchor, "/", "\\"))
    return tuple(part for part in path.split("/") if part and part != "." and part != "\\")


def agent_root(path: str) -> Path | None:
    """The agent's own spill directory that a written path claims to be under, if its layout fits."""
    normal = os.path.normpath(path.replace("\\", "/"))
    for pattern in _AGENT_ROOTS:
        match = pattern.match(normal)
        if match:
            return Path(match.group(1))
    return None


class SpillLocator:
    """Resolves pointers for one session; built once, used for every pointer of one audit.

    It remembers what it saw of the directories it looked in (which bases are directories, which
    candidate directories are not), so the pointers of a session, which mostly share a few
    directories, cost a few system calls each; a new audit makes a new locator and looks afresh.
    """

    def __init__(
        self,
        session_path: Path | None,
        *,
        spill_roots: Iterable[Path] = (),
        session_roots: Iterable[Path] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.explicit = tuple(Path(root) for root in spill_roots)
        self.session_roots = tuple(Path(root) for root in session_roots)
        dump_dir = Path(session_path).parent if session_path is not None else None
        self.beside = (dump_dir, dump_dir / "tmp") if dump_dir is not None else ()
        self.dump_dir = dump_dir
        self._env = os.environ if env is None else env
        self._groups = (self.explicit, self.beside, self.session_roots)
        self._group_directories: dict[int, list[tuple[Path, str]]] = {}  # bases that are directories, with "<base>/"
        self._is_directory: dict[str, bool] = {}

    @property
    def bases(self) -> tuple[Path, ...]:
        """Every directory a moved spill file may sit under, in lookup order."""
        return self.explicit + self.beside + self.session_roots

    def resolve(self, pointer: SpillPointer) -> Resolution:
        if pointer.artifact_name is not None:
            return self._resolve_relative(pointer, autobot_roots(self.bases, self._env, self.dump_dir))
        if pointer.path is None:
            return Resolution(pointer, None, None, False, (), 0)
        suffixes = _suffixes(written_parts(pointer.path))
        searched = 0
        for group in range(len(self._groups)):
            found, base, tried = self._by_suffix(suffixes, group)
            searched += tried
            if found is not None:
                return self._resolution(pointer, found, (base,), searched)
        searched += 1
        if self._lexists(pointer.path):
            root = agent_root(pointer.path)
            return self._resolution(pointer, Path(pointer.path), (root,) if root else (), searched)
        return Resolution(pointer, None, None, False, (), searched)

    def _resolve_relative(self, pointer: SpillPointer, roots: tuple[Path, ...]) -> Resolution:
        for root in roots:
            candidate = root / pointer.artifact_name
            if os.path.lexists(candidate):
                return self._resolution(pointer, candidate, (root,), len(roots))
        return Resolution(pointer, None, None, False, roots, len(roots))

    def _resolution(self, pointer: SpillPointer, found: Path, roots: tuple, searched: int) -> Resolution:
        """Found: the roots it must stay under, and whether it moved from where the session wrote it."""
        allowed = tuple(dict.fromkeys(Path(os.path.realpath(r)) for r in (*roots, *self.explicit, *self.session_roots)))
        remapped = pointer.path is not None and os.path.normpath(found) != os.path.normpath(pointer.path)
        return Resolution(pointer, found, Path(os.path.realpath(found)), remapped, allowed, searched)

    def _by_suffix(self, suffixes: list[tuple[tuple[str, ...], str]], group: int) -> tuple[Path | None, Path | None, int]:
        """The first of `suffixes` (see `_suffixes`) that exists under one of the group's bases, and how
        many candidates that took. A candidate is the base's path with "/" and the suffix (what
        `base.joinpath` gives), built as a string; only the one found becomes a Path."""
        bases = self._group_directories.get(group)
        if bases is None:
            bases = self._group_directories[group] = [
                (base, str(base).rstrip("/") + "/") for base in self._groups[group] if base.is_dir()]
        tried = 0
        for suffix, relative in suffixes if bases else ():
            within = relative[: -len(suffix[-1]) - 1]  # the candidate's directory below the base ("" for none)
            for base, prefix in bases:
                tried += 1
                if within and not self._is_a_directory(prefix + within):
                    continue  # so the candidate cannot exist
                if os.path.lexists(prefix + relative):
                    return base.joinpath(*suffix), base, tried
        return None, None, tried

    def _lexists(self, path: str) -> bool:
        """`os.path.lexists(path)`, answered False without a system call when this locator already found
        the path's directory not to be one."""
        directory = os.path.dirname(path)
        if directory and directory != path and not self._is_a_directory(directory):
            return False
        return os.path.lexists(path)

    def _is_a_directory(self, path: str) -> bool:
        """`os.path.isdir(path)`, asked once per locator. Only a False answer is relied on, to skip the
        entries under `path`: reaching an entry needs its directory to resolve to a directory, so
        none can exist (a True answer only means the entry itself is then looked up)."""
        known = self._is_directory.get(path)
        if known is None:
            known = self._is_directory[path] = os.path.isdir(path)
        return known


def _suffixes(parts: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """The suffixes of a written path's parts a moved file is looked for by, longest first, without the
    whole path and without any that climbs out with `..`; each with its parts joined by "/"."""
    return [(parts[start:], "/".join(parts[start:])) for start in range(1, len(parts)) if ".." not in parts[start:]]


def autobot_roots(bases: Iterable[Path], env: Mapping[str, str], dump_dir: Path | None) -> tuple[Path, ...]:
    """AutoBot's artifact roots: the configured or default one, then every base (and its `tool_output_spill`)."""
    roots = list(default_roots(env, dump_dir))
    for base in bases:
        roots += [base, base / "tool_output_spill"]
    return tuple(dict.fromkeys(roots))
