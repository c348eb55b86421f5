"""Qwen Code: `/doctor:memory` as a custom slash command, allowed by a permission rule.

`<base>/commands/doctor/memory.md` (`~/.qwen` or `$QWEN_HOME`, or `<project>/.qwen`) becomes
`/doctor:memory`; its `!{…}` line runs `doctor slash qwen` with the typed arguments shell-quoted
(`{{args}}`). Qwen puts `QWEN_CODE_SESSION_ID` and `QWEN_CODE_PROJECT_DIR` (the project's data
folder) in the command's environment, so doctor reads that session. Without a YOLO approval mode
the line needs `permissions.allow: ["run_shell_command(doctor slash qwen --args=*)"]` in
`settings.json` (the command file's form, nothing wider).
The same `settings.json` gets a `PostToolUse` hook running `doctor hook qwen` (the oversized alarm)
and `ui.statusLine: {type: command, command: "doctor statusline qwen"}` (Qwen 0.24.4 runs it with
`session_id` and `workspace.current_dir` on stdin), unless `ui.statusLine` is set already: a
user's preset, command or `null` (status line off) is kept, and install says so. Unset, it means
Qwen's built-in default status line, which doctor's then replaces: install says that too, and
`--no-statusline` leaves it (and takes doctor's out if an earlier install put it there).
Never a top-level `commands/doctor.md`: it would take over Qwen's built-in `/doctor`.
"""

from __future__ import annotations

import re

from doctor.integrations.plans import SHOW_AS_IS, Location, Plan, edit_hook, edit_status_line
from doctor.integrations.program import is_doctor
from doctor.integrations.files import Comments, add_to_list, json_settings, owned_file, remove_from_list
from doctor.sources.discovery import QWEN, agent_homes

def command_file(program: str) -> str:
    """`commands/doctor/memory.md`, running `program` (the doctor that installed it)."""
    return f"""\
---
# Written by `doctor install qwen`; `doctor uninstall qwen` removes it.
description: doctor memory - what this session keeps in context (compact; full report in a 0600 file)
---
!{{{program} slash qwen --args={{{{args}}}}}}

{SHOW_AS_IS}
"""


# Exactly the command file's form (Qwen matches `*` as anything; `doctor slash` refuses `--transcript`
# beside `--args`, so nothing after the typed word can name another file). Qwen splits `;`, `&&`, `|`
# and newlines off and asks about command substitution before any rule applies.
def permission(program: str) -> str:
    return f"run_shell_command({program} slash qwen --args=*)"


RULE = re.compile(r"run_shell_command\((.*)\)", re.DOTALL)


def is_doctors_permission(rule: object) -> bool:
    """A rule some install of doctor wrote: this form from any doctor's path, or the wider
    `run_shell_command(doctor slash)` of earlier installs."""
    found = RULE.fullmatch(rule) if isinstance(rule, str) else None
    return found is not None and (is_doctor(found.group(1), "slash", "qwen", "--args=*")
                                  or is_doctor(found.group(1), "slash"))


# Qwen 0.24.4's settings schema: "When unset (default), the built-in default preset (project name, git
# branch, model, context usage) is shown automatically"; a command status line keeps the footer's
# context indicator.
REPLACES_DEFAULT = ("doctor's status line replaces Qwen's built-in default one (project, git branch, model, "
                    "context usage; the footer still shows context usage); to keep Qwen's, "
                    "run `doctor install qwen --no-statusline`")
ALLOW = ("permissions", "allow")


# Qwen Code strips comments from settings.json before JSON.parse (trailing commas stop it: jsonc.py).
READS_COMMENTS = Comments("Qwen Code")


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    base = location.base(agent_homes(location.env)[QWEN], ".qwen")
    program = location.program
    command = owned_file(base / "commands" / "doctor" / "memory.md", command_file(program) if installing else None,
                         location.within)

    def edit(settings: dict) -> None:
        wanted = permission(program)
        remove_from_list(settings, ALLOW,
                         lambda rule: not is_doctors_permission(rule) or (installing and rule == wanted))
        if installing:
            add_to_list(settings, ALLOW, wanted)
        edit_hook(settings, "qwen", "PostToolUse", program, installing=installing,
                  tell_model=options.get("tell_model", False), matcher="*", timeout=30)
        if edit_status_line(settings, ("ui", "statusLine"), "qwen", program, installing=installing, notes=notes,
                            wanted=options.get("statusline", True)):
            notes.append(REPLACES_DEFAULT)

    notes = ["type /doctor:memory in Qwen Code; the status line shows the tool output kept in context"] \
        if installing else []
    return Plan([command, json_settings(base / "settings.json", edit, READS_COMMENTS, installing=installing,
                                        within=location.within)], notes)
