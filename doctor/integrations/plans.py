"""What `doctor install <agent>` plans: where it writes (`Location`), the changes (`Plan`), and
the settings edits every agent shares (doctor's hook, its status line). Every command written runs
`Location.program`, the doctor that runs the install, by its absolute path
(`doctor.integrations.program`); what an earlier install wrote with another path, or a bare
`doctor`, is still recognised as doctor's, replaced on install and removed on uninstall."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from doctor.integrations import USER
from doctor.integrations.program import doctor_program, is_doctor

# What every agent's `/doctor:memory` tells the model after doctor's summary (a command file's last line,
# Codex's prompt hook's last paragraph): the user asked to see it, not for the model's retelling.
SHOW_AS_IS = "Show the doctor summary above to the user as it is, then stop; do not run any tool."


@dataclass(frozen=True)
class Location:
    """Where an install goes: the scope, the project directory and the environment naming homes;
    `program` the shell words the agent's commands start doctor with."""

    scope: str
    project: Path
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    program: str = field(default_factory=doctor_program)

    def base(self, agent_home: Path, dot_folder: str) -> Path:
        """The agent's home for `--user`, `<project>/<dot_folder>` for `--project`."""
        return agent_home if self.scope == USER else self.project / dot_folder

    @property
    def within(self) -> Path | None:
        """Where everything an install writes must resolve: the project for `--project` (a repository's
        links are not the user's to follow out of it); anywhere for `--user` (dotfiles links)."""
        return None if self.scope == USER else self.project


@dataclass(frozen=True)
class Plan:
    """What installing (or uninstalling) one agent changes, and what the user must still do."""

    changes: list
    notes: list[str] = field(default_factory=list)


def plan(agent: str, location: Location, *, installing: bool, options: Mapping | None = None) -> Plan:
    module = importlib.import_module(f"doctor.integrations.{agent}")
    return module.plan(location, installing=installing, options=dict(options or {}))


def hook_command(agent: str, program: str, *, tell_model: bool = False) -> str:
    """The command an agent's hook runs; `--tell-model` when the user opted in at install time."""
    return f"{program} hook {agent}" + (" --tell-model" if tell_model else "")


def is_hook_command(command: object, agent: str) -> bool:
    """Whether `command` is doctor's hook for `agent` (either --tell-model form, any doctor's path)."""
    return is_doctor(command, "hook", agent) or is_doctor(command, "hook", agent, "--tell-model")


def edit_hook(settings: dict, agent: str, event: str, program: str, *, installing: bool, tell_model: bool = False,
              matcher: str | None = None, timeout: int | None = None) -> None:
    """Install doctor's hook for `event` (replacing any other form of it: the other --tell-model variant,
    another doctor's path), or remove every form."""
    from doctor.integrations.files import add_hook, remove_hook

    wanted = hook_command(agent, program, tell_model=tell_model)
    remove_hook(settings, event,
                lambda command: is_hook_command(command, agent) and not (installing and command == wanted))
    if installing:
        add_hook(settings, event, wanted, matcher=matcher, timeout=timeout)


def status_line_command(agent: str, program: str) -> str:
    return f"{program} statusline {agent}"


def edit_status_line(settings: dict, keys: tuple[str, ...], agent: str, program: str, *, installing: bool,
                     notes: list[str], wanted: bool = True) -> bool:
    """Set `settings[keys]` to doctor's command status line, unless the user has one of their own:
    theirs is kept (a note says so and how to switch); doctor's from another path is brought up to
    `program`. Uninstall, or install with `wanted` False (`--no-statusline`), removes only doctor's.
    True when this call sets it where nothing was set."""
    from doctor.integrations.files import remove_key, set_key

    command = status_line_command(agent, program)
    holder = settings
    for key in keys[:-1]:
        holder = holder.get(key) if isinstance(holder, dict) else None
    present = isinstance(holder, dict) and keys[-1] in holder
    current = holder.get(keys[-1]) if present else None

    def doctors(value) -> bool:
        return isinstance(value, dict) and is_doctor(value.get("command"), "statusline", agent)

    if not installing or not wanted:
        remove_key(settings, keys, doctors)
        return False
    if not present:
        set_key(settings, keys, {"type": "command", "command": command})
        return True
    if doctors(current) and current.get("command") != command:
        set_key(settings, keys, {**current, "command": command})
    elif not doctors(current):
        notes.append(f"kept your own {'.'.join(keys)} setting; to show doctor's line instead, set it to "
                     f'{{"type": "command", "command": "{command}"}}')
    return False
