"""Edits to a user's agent files that never lose a key: plan first, then apply (or only show).

`doctor install` touches two kinds of files. Files doctor owns outright (a command file, a
policy file) carry a marker line; doctor replaces or removes one only when the marker is there,
so a user's own file at the same path is refused, never overwritten. Settings files belong to
the user: doctor parses them, changes its own entries in the parsed object and writes the whole
object back, so every other key survives (order kept); one that does not parse is refused and
left untouched. Every existing settings file is copied to a `.doctor-backup-<time>` sibling before it
changes, and writes go through a temporary file and `os.replace`, keeping the file's mode.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MARKER = "doctor install"  # every file doctor owns says "Written by `doctor install <agent>`"


class Refused(Exception):
    """A file doctor will not change: it does not parse, or it is the user's own."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path


@dataclass(frozen=True)
class Change:
    """One file's content before and after (None: absent); `backup`: the user's file, copied before it changes."""

    path: Path
    before: str | None
    after: str | None
    backup: bool = False

    @property
    def verb(self) -> str:
        if self.before == self.after:
            return "unchanged"
        return "created" if self.before is None else "removed" if self.after is None else "updated"

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            (self.before or "").splitlines(keepends=True), (self.after or "").splitlines(keepends=True),
            f"{self.path}" if self.before is not None else "/dev/null",
            f"{self.path}" if self.after is not None else "/dev/null"))


def read_text(path: Path) -> str | None:
    """The file's text as it is on disk, line endings included (`newline=""`): a backup written from
    it is the file byte for byte, and a file left unchanged compares equal to itself."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(path, f"cannot read it ({getattr(exc, 'strerror', None) or exc})") from None


def owned_file(path: Path, content: str | None) -> Change:
    """The change that gives a doctor-owned file `content` (None: removes it), if it is doctor's."""
    before = read_text(path)
    if before is not None and MARKER not in before:
        if content is None:  # uninstalling: the user's own file is theirs to keep
            return Change(path, before, before)
        if before != content:
            raise Refused(path, "exists and was not written by doctor; move it away first")
    return Change(path, before, content)


JsonEdit = Callable[[dict], None]


@dataclass(frozen=True)
class Comments:
    """An agent that strips comments from its settings file before JSON.parse (Gemini CLI, Qwen Code);
    `agent` names it in messages."""

    agent: str


def json_settings(path: Path, edit: JsonEdit, comments: Comments | None = None) -> Change:
    """The change `edit` (which mutates a parsed settings object in place) makes to a JSON file.
    A file of plain JSON is written back whole (2-space indent, key order kept); one whose agent
    reads comments (`comments`) and that holds some is edited in place (doctor/core/jsonc.py),
    its comments and layout kept, and refused if the result would not read back as the edit."""
    before = read_text(path)
    tree = None
    if before is None or not before.strip():
        settings: dict = {}
    else:
        try:
            settings = json.loads(before)
        except ValueError as exc:
            if comments is None:
                raise Refused(path, f"not valid JSON (line {exc.lineno}: {exc.msg}); fix it or move it away first") from None
            settings, tree = _parsed_with_comments(path, before, comments)
        if not isinstance(settings, dict):
            raise Refused(path, "does not hold a JSON object")
    edited = copy.deepcopy(settings)
    try:
        edit(edited)
    except ValueError as exc:
        raise Refused(path, f"{exc}; doctor will not guess how to merge into it") from None
    if edited == settings:
        return Change(path, before, before)
    if tree is not None:
        return Change(path, before, _edited_with_comments(path, before, tree, settings, edited, comments), backup=True)
    if not edited:  # it held only doctor's entries: uninstall leaves no empty file behind
        return Change(path, before, None, backup=True)
    return Change(path, before, json.dumps(edited, indent=2, ensure_ascii=False) + "\n", backup=True)


def _parsed_with_comments(path: Path, text: str, comments: Comments):
    from doctor.core import jsonc

    try:
        return jsonc.parse(text)
    except ValueError as exc:
        raise Refused(path, f"not valid JSON with comments, as {comments.agent} reads it ({exc}); "
                            "fix it or move it away first") from None


def _edited_with_comments(path: Path, text: str, tree, settings: dict, edited: dict, comments: Comments) -> str:
    """`text` with the edit made in place; refused unless it reads back as exactly `edited` (jsonc.py
    will not guess which of a key given twice to edit; the property tests find no other case)."""
    from doctor.core import jsonc

    try:
        after = jsonc.edit_text(text, tree, settings, edited)
        if jsonc.same(jsonc.parse(after)[0], edited):
            return after
    except ValueError:
        pass
    raise Refused(path, "holds comments and a key given twice where doctor adds its entries; keep one of the "
                        "two (the agent reads the last) and run install again")


def apply(changes: list[Change], *, stamp: str | None = None) -> dict[Path, Path]:
    """Write the changes (backups first); returns each changed existing file's backup."""
    stamp = stamp or time.strftime("%Y%m%dT%H%M%S")
    backups = {}
    for change in changes:
        if change.before == change.after:
            continue
        if change.backup and change.before is not None:
            backups[change.path] = back_up(change.path, change.before, stamp)
        if change.after is None:
            change.path.unlink()
            _remove_empty_dirs(change.path.parent)
        else:
            _write(change.path, change.after)
    return backups


def back_up(path: Path, text: str, stamp: str | None = None) -> Path:
    """Copy `text`, the content of `path`, to its `.doctor-backup-<time>` sibling, with the file's mode."""
    backup = path.with_name(f"{path.name}.doctor-backup-{stamp or time.strftime('%Y%m%dT%H%M%S')}")
    _write(backup, text, mode=path.stat().st_mode & 0o777)  # a 0600 file stays 0600
    return backup


def restore(path: Path, text: str) -> None:
    """Put `text` back into `path` (what a backup holds), keeping the file's mode."""
    _write(path, text)


def _write(path: Path, text: str, mode: int | None = None) -> None:
    """`text` into `path` through a temporary file born with the final mode (the existing file's, or 0644)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    temporary = path.with_name(f".{path.name}.doctor-{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:  # the text's own line endings
        handle.write(text)
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def _remove_empty_dirs(directory: Path) -> None:
    """Remove the `doctor/` folder a command file lived in once it is empty (and nothing above it)."""
    if directory.name == "doctor":
        try:
            directory.rmdir()
        except OSError:
            pass


# --- edits of parsed JSON settings ---------------------------------------------------------------

def add_to_list(settings: dict, keys: tuple[str, ...], value) -> None:
    """`settings[k1][k2]…` is a list holding `value` (created if missing)."""
    holder = _dig(settings, keys[:-1], create=True)
    items = holder.setdefault(keys[-1], [])
    if not isinstance(items, list):
        raise ValueError(f"{'.'.join(keys)} is not a list")
    if value not in items:
        items.append(value)


def remove_from_list(settings: dict, keys: tuple[str, ...], keep: Callable[[object], bool]) -> None:
    """Drop the items of the list at `keys` that `keep` rejects; prune what that empties."""
    holder = _dig(settings, keys[:-1], create=False)
    if holder is None or not isinstance(holder.get(keys[-1]), list):
        return
    items = holder[keys[-1]]
    kept = [item for item in items if keep(item)]
    if len(kept) != len(items):
        holder[keys[-1]] = kept
        prune(settings, keys)


def set_key(settings: dict, keys: tuple[str, ...], value) -> None:
    _dig(settings, keys[:-1], create=True)[keys[-1]] = value


def remove_key(settings: dict, keys: tuple[str, ...], when: Callable[[object], bool]) -> None:
    holder = _dig(settings, keys[:-1], create=False)
    if holder is not None and keys[-1] in holder and when(holder[keys[-1]]):
        del holder[keys[-1]]
        prune(settings, keys[:-1])


def prune(settings: dict, keys: tuple[str, ...]) -> None:
    """Remove the containers along `keys` that are now empty, deepest first."""
    for depth in range(len(keys), 0, -1):
        holder = _dig(settings, keys[:depth - 1], create=False)
        name = keys[depth - 1]
        if isinstance(holder, dict) and name in holder and holder[name] in ([], {}):
            del holder[name]


def _dig(settings: dict, keys: tuple[str, ...], *, create: bool) -> dict | None:
    node = settings
    for key in keys:
        child = node.get(key)
        if child is None and create:
            child = node[key] = {}
        if not isinstance(child, dict):
            if child is None:
                return None
            raise ValueError(f"{'.'.join(keys)}: {key} is not an object")
        node = child
    return node


# --- hooks tables: {"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command", "command": C}]}]}} ----
# Claude Code, Qwen Code, Gemini CLI (settings.json) and Codex (hooks.json) share this shape.

def add_hook(settings: dict, event: str, command: str, matcher: str | None = None, timeout: int | None = None) -> None:
    """One group running `command` on `event`, unless a group already runs it."""
    groups = settings.setdefault("hooks", {}).setdefault(event, [])
    if not isinstance(groups, list):
        raise ValueError(f"hooks.{event} is not a list")
    if any(_runs(group, command) for group in groups):
        return
    handler = {"type": "command", "command": command, **({"timeout": timeout} if timeout else {})}
    groups.append({**({"matcher": matcher} if matcher is not None else {}), "hooks": [handler]})


def remove_hook(settings: dict, event: str, command: str) -> None:
    """Drop doctor's `command` handlers from `event` (a group left empty goes too)."""
    groups = (settings.get("hooks") or {}).get(event) if isinstance(settings.get("hooks"), dict) else None
    if not isinstance(groups, list):
        return
    kept = []
    for group in groups:
        if not _runs(group, command):
            kept.append(group)
            continue
        handlers = [handler for handler in group["hooks"] if not _is(handler, command)]
        if handlers:
            kept.append({**group, "hooks": handlers})
    if kept != groups:
        settings["hooks"][event] = kept
        prune(settings, ("hooks", event))


def _runs(group, command: str) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list) and any(
        _is(handler, command) for handler in group["hooks"])


def _is(handler, command: str) -> bool:
    return isinstance(handler, dict) and handler.get("command") == command
