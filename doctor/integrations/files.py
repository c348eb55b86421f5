"""Edits to a user's agent files that never lose a key: plan first, then apply (or only show), all or nothing.

`doctor install` touches two kinds of files. Files doctor owns outright (a command file, a
policy file) carry a marker line; doctor replaces or removes one only when the marker is there,
so a user's own file at the same path is refused, never overwritten. Settings files belong to
the user: doctor parses them as their agent does (doctor/core/jsonc.py), changes its own entries
and edits the text in place, so every other key, token and byte stays as it was (`1e400`, an
escaped lone surrogate, a key given twice where doctor does not edit, the layout); one that does
not parse is refused and left untouched.

Planning reads every file and refuses, before anything is written, what could not be written:
a file that is not a regular file, another user's, a read-only one, a link where doctor's own
file goes, or (`--project`) anything that resolves outside the project. A settings file that is
a symbolic link (dotfiles) is written through on purpose: the change goes to the file the link
leads to, the link stays, and install says so. `apply` then backs up every settings file it
changes (a new `.doctor-backup-<time>[-N]` name each time, never overwriting one) and writes
through doctor/safety/writes.py; if any step fails, what it had done is undone and the error
says so. Uninstall puts back the newest backup's bytes when they hold exactly what uninstall
would leave (the user changed nothing else in between), and removes the folders a removed
command file leaves empty.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from doctor.safety import writes
from doctor.safety.writes import Refused

MARKER = "doctor install"  # every file doctor owns says "Written by `doctor install <agent>`"
BACKUP = ".doctor-backup-"
_BACKUP_NAME = re.compile(r"(\d{8}T\d{6})(?:-(\d+))?")
# left empty by a removed file of doctor's: removed too (`commands/doctor/`, `policies/`, Codex's
# `skills/doctor-memory/agents/`), climbing while the folder is one of these
_DOCTORS_FOLDERS = ("doctor", "commands", "policies", "doctor-memory", "skills")


@dataclass(frozen=True)
class Change:
    """One file's content before and after (None: absent). `backup`: the user's file, copied before it
    changes; `found`: the file as read (where its bytes are, checked again before it is replaced);
    `restored`: the backup whose bytes uninstall puts back."""

    path: Path
    before: str | None
    after: str | None
    backup: bool = False
    found: writes.Found | None = field(default=None, compare=False, repr=False)
    restored: Path | None = None

    @property
    def verb(self) -> str:
        if self.before == self.after:
            return "unchanged"
        if self.restored is not None:
            return "restored"
        return "created" if self.before is None else "removed" if self.after is None else "updated"

    @property
    def link_target(self) -> Path | None:
        """The file written when `path` is a symbolic link written through."""
        return Path(self.found.real) if self.found is not None and self.found.through_link else None

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            (self.before or "").splitlines(keepends=True), (self.after or "").splitlines(keepends=True),
            f"{self.path}" if self.before is not None else "/dev/null",
            f"{self.path}" if self.after is not None else "/dev/null"))


def read_settings(path: Path, within: Path | None = None) -> tuple[str | None, writes.Found]:
    """A user's settings file as it is on disk (line endings included; None: absent), read through a
    symbolic link on purpose (dotfiles); with `within` (`--project`), the file must resolve inside it."""
    found = _read(path, through_link=True)
    if found.through_link:
        _check_within(path, Path(found.real), within, "is a symbolic link to")
    return _decoded(path, found), found


def owned_file(path: Path, content: str | None, within: Path | None = None) -> Change:
    """The change that gives a doctor-owned file `content` (None: removes it), if it is doctor's."""
    try:
        found = _read(path, through_link=False)
    except Refused:
        if content is None:  # a link or a folder where doctor's file would be: not doctor's, theirs to keep
            return Change(path, None, None)
        raise Refused(path, "is not a regular file doctor wrote (a link or a folder); move it away first") from None
    before = _decoded(path, found)
    if before is not None and MARKER not in before:
        if content is None:  # uninstalling: the user's own file is theirs to keep
            return Change(path, before, before)
        if before != content:
            raise Refused(path, "exists and was not written by doctor; move it away first")
    change = Change(path, before, content, found=found)
    _check_writable(change, within)
    return change


JsonEdit = Callable[[dict], None]


@dataclass(frozen=True)
class Comments:
    """An agent that strips comments from its settings file before JSON.parse (Gemini CLI, Qwen Code);
    `agent` names it in messages; `bom`: it also skips a leading byte order mark (Qwen does, Gemini does not)."""

    agent: str
    bom: bool = True


def json_settings(path: Path, edit: JsonEdit, comments: Comments | None = None, *, installing: bool = True,
                  within: Path | None = None) -> Change:
    """The change `edit` (which mutates a parsed settings object in place) makes to a JSON file, as text
    edited in place (doctor/core/jsonc.py): only doctor's members change. `comments`: its agent reads
    comments (else it is plain JSON, as Claude Code and Codex read it). Refused if the result would not
    read back as exactly the edit. Uninstalling (`installing` False), the newest backup's bytes come
    back when they hold what uninstall leaves."""
    from doctor.core import jsonc

    before, found = read_settings(path, within)
    tree = None
    if before is None or not before.strip():
        settings: dict = {}
    else:
        settings, tree = _parsed(path, before, comments)
        if not isinstance(settings, dict):
            raise Refused(path, "does not hold a JSON object")
    edited = copy.deepcopy(settings)
    try:
        edit(edited)
    except ValueError as exc:
        raise Refused(path, f"{exc}; doctor will not guess how to merge into it") from None
    if jsonc.same(edited, settings):
        return Change(path, before, before, found=found)
    change = _restored(path, found, before, edited, comments) if not installing else None
    if change is None and not edited and not found.through_link:  # it held only doctor's entries
        change = Change(path, before, None, backup=True, found=found)  # uninstall leaves no empty file behind
    if change is None:
        change = Change(path, before, _edited_text(path, before, tree, settings, edited, comments), backup=True,
                        found=found)
    _check_writable(change, within)
    return change


def _parsed(path: Path, text: str, comments: Comments | None):
    from doctor.core import jsonc

    try:
        if comments is None:
            return jsonc.parse(text, comments=False, bom=False)
        return jsonc.parse(text, bom=comments.bom)
    except ValueError as exc:
        if comments is None:
            raise Refused(path, f"not valid JSON ({exc}); fix it or move it away first") from None
        raise Refused(path, f"not valid JSON with comments, as {comments.agent} reads it ({exc}); "
                            "fix it or move it away first") from None


def _edited_text(path: Path, text: str | None, tree, settings: dict, edited: dict, comments: Comments | None) -> str:
    """`text` with the edit made in place (a new file: the edit, 2-space indent); refused unless it reads
    back as exactly `edited` (jsonc.py will not guess which of a key given twice to edit, nor write a
    number JSON has no token for) and can be written as UTF-8."""
    import json

    from doctor.core import jsonc

    reason = "something doctor cannot edit exactly"
    try:
        if tree is None:
            after = json.dumps(edited, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        else:
            after = jsonc.edit_text(text, tree, settings, edited)
        after.encode("utf-8")  # strict: what cannot be written is refused now, not halfway through
        if jsonc.same(jsonc.parse(after)[0], edited):
            return after
    except ValueError as exc:  # UnicodeEncodeError is one too
        reason = str(exc) if "where doctor edits" in str(exc) else reason
    fix = "keep one of the two (the agent reads the last) and run install again" if "twice" in reason \
        else "doctor leaves the file as it is"
    raise Refused(path, f"holds {reason}; {fix}")


def _restored(path: Path, found: writes.Found, before: str | None, edited: dict,
              comments: Comments | None) -> Change | None:
    """Uninstall's change when the newest backup holds exactly what uninstall leaves: its bytes, back."""
    from doctor.core import jsonc

    backup = newest_backup(path)
    if backup is None:
        return None
    try:
        text = _decoded(backup, _read(backup, through_link=False))
        value = _parsed(backup, text, comments)[0] if text is not None and text.strip() else {}
    except Refused:
        return None
    if text is None or not jsonc.same(value, edited):
        return None
    return Change(path, before, text, backup=True, found=found, restored=backup)


def newest_backup(path: Path) -> Path | None:
    """The latest `<name>.doctor-backup-<time>[-N]` beside `path` (by time, then N)."""
    newest, key = None, None
    try:
        names = os.listdir(path.parent)
    except OSError:
        return None
    prefix = path.name + BACKUP
    for name in names:
        match = _BACKUP_NAME.fullmatch(name[len(prefix):]) if name.startswith(prefix) else None
        if match and (key is None or (match[1], int(match[2] or 1)) > key):
            newest, key = path.parent / name, (match[1], int(match[2] or 1))
    return newest


def _read(path: Path, through_link: bool) -> writes.Found:
    try:
        return writes.read_current(path, through_link=through_link)
    except Refused:
        raise
    except OSError as exc:
        raise Refused(path, f"cannot read it ({exc.strerror or exc})") from None


def _decoded(path: Path, found: writes.Found) -> str | None:
    if found.data is None:
        return None
    try:
        return found.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(path, f"is not UTF-8 text (byte {exc.start}); fix it or move it away first") from None


def _check_writable(change: Change, within: Path | None) -> None:
    """Refuse now what writing `change` would meet: a file doctor may not replace, a folder that is a
    file, or (`within`) a place outside the project."""
    if change.before == change.after:
        return
    if change.found is not None and change.found.identity is not None:
        writes.check_replaceable(change.found)
    real = Path(change.found.real) if change.found is not None else change.path
    folder = real.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise Refused(folder, f"is not a folder, so {change.path.name} cannot go beneath it; move it away first")
    _check_within(change.path, Path(os.path.realpath(folder)) / real.relative_to(folder), within, "leads to")


def _check_within(path: Path, real: Path, within: Path | None, says: str) -> None:
    if within is not None and not real.is_relative_to(os.path.realpath(within)):
        raise Refused(path, f"{says} {real}, outside the project {within}; a project's install writes only inside "
                            "the project (replace the link with the file, or install --user)")


def apply(changes: list[Change], *, stamp: str | None = None,
          then: Callable[[], None] | None = None) -> dict[Path, Path]:
    """Write the changes, all or nothing: backups first, then each file, then `then` (a step that needs the
    files written, such as Codex recording its trust in them); if a step fails, every file is put back
    as it was (backups and folders made for it removed) and the error is raised. Returns each changed
    existing file's backup."""
    stamp = stamp or time.strftime("%Y%m%dT%H%M%S")
    changed = [change for change in changes if change.before != change.after]
    undo = _Undo()
    try:
        for change in changed:
            if change.backup and change.before is not None:
                undo.backups[change.path] = back_up(change.path, change.found, stamp)
        for change in changed:
            try:
                _apply_one(change, undo)
            except OSError as exc:
                exc.filename = exc.filename or str(change.path)  # a failed write() names no file
                raise
        if then is not None:
            then()
    except BaseException as exc:
        undo.run(exc)
        raise
    for change in changed:
        if change.after is None:
            _remove_empty_folders(change.path.parent)
    return dict(undo.backups)


def _apply_one(change: Change, undo: _Undo) -> None:
    if change.after is None:
        writes.remove(change.found)
        undo.removed.append(change)
        return
    undo.folders.extend(writes.make_folders(Path(change.found.real if change.found else change.path).parent))
    writes.replace(change.path, change.after, expect=change.found, through_link=True)
    undo.written.append(change)


class _Undo:
    """What `apply` did so far, and how to take it back."""

    def __init__(self):
        self.backups: dict[Path, Path] = {}
        self.written: list[Change] = []
        self.removed: list[Change] = []
        self.folders: list[str] = []

    def run(self, error: BaseException) -> None:
        left = []
        for change in [*reversed(self.written), *reversed(self.removed)]:
            try:
                if change.before is None:
                    os.unlink(change.path)
                else:  # the original bytes and mode, through the link again if it was one
                    writes.replace(change.path, change.found.data, mode=change.found.mode, through_link=True)
            except OSError:
                left.append(change.path)
        for folder in reversed(self.folders):
            try:
                os.rmdir(folder)
            except OSError:
                pass
        for backup in self.backups.values():
            if not left:
                backup.unlink(missing_ok=True)
        if isinstance(error, OSError):
            error.strerror = (f"{error.strerror or error}; " + (
                "nothing changed (what was written was put back)" if not left else
                f"could not put back {', '.join(map(str, left))}: the backups beside them hold the originals"))


def back_up(path: Path, found: writes.Found, stamp: str | None = None) -> Path:
    """Copy the bytes `found` holds (the content of `path`) to a new `.doctor-backup-<time>` sibling of
    `path` (`-2`, `-3`… when that name exists: a backup is never overwritten), with the file's mode."""
    name = f"{path.name}{BACKUP}{stamp or time.strftime('%Y%m%dT%H%M%S')}"
    return Path(writes.create_unique(path.with_name(name), found.data, mode=found.mode))  # a 0600 file stays 0600


def restore(path: Path, text: str) -> None:
    """Put `text` back into `path` (what a backup holds), keeping the file's mode, through its link if it is one."""
    writes.replace(path, text, through_link=True)


def _remove_empty_folders(folder: Path) -> None:
    """Remove the folders of doctor's a removed file left empty: `commands/doctor/` (then `commands/`),
    `policies/`, `skills/doctor-memory/agents/` (then `doctor-memory/`, then `skills/`)."""
    for _ in range(3):
        ours = folder.name in _DOCTORS_FOLDERS or (folder.name == "agents" and folder.parent.name == "doctor-memory")
        if not ours:
            return
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


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
    if any(_runs(group, lambda other: other == command) for group in groups):
        return
    handler = {"type": "command", "command": command, **({"timeout": timeout} if timeout else {})}
    groups.append({**({"matcher": matcher} if matcher is not None else {}), "hooks": [handler]})


def remove_hook(settings: dict, event: str, doctors: Callable[[object], bool]) -> None:
    """Drop the handlers of `event` whose command `doctors` accepts (a group left empty goes too)."""
    groups = (settings.get("hooks") or {}).get(event) if isinstance(settings.get("hooks"), dict) else None
    if not isinstance(groups, list):
        return
    kept = []
    for group in groups:
        if not _runs(group, doctors):
            kept.append(group)
            continue
        handlers = [handler for handler in group["hooks"] if not _is(handler, doctors)]
        if handlers:
            kept.append({**group, "hooks": handlers})
    if kept != groups:
        settings["hooks"][event] = kept
        prune(settings, ("hooks", event))


def _runs(group, doctors: Callable[[object], bool]) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list) and any(
        _is(handler, doctors) for handler in group["hooks"])


def _is(handler, doctors: Callable[[object], bool]) -> bool:
    return isinstance(handler, dict) and doctors(handler.get("command"))
