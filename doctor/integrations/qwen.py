"""Qwen Code: `/doctor:memory` as a custom slash command, allowed by a permission rule.

`<base>/commands/doctor/memory.md` (`~/.qwen` or `$QWEN_HOME`, or `<project>/.qwen`) becomes
`/doctor:memory`; its `!{…}` line runs `doctor slash qwen` with the typed arguments shell-quoted
(`{{args}}`). Qwen puts `QWEN_CODE_SESSION_ID` and `QWEN_CODE_PROJECT_DIR` (the project's data
folder) in the command's environment, so doctor reads that session. Without a YOLO approval mode
the line needs `permissions.allow: ["run_shell_command(doctor slash)"]` in `settings.json`.
The same `settings.json` gets a `PostToolUse` hook running `doctor hook qwen` (the oversized alarm)
and `ui.statusLine: {type: command, command: "doctor statusline qwen"}` (Qwen 0.24.4 runs it with
`session_id` and `workspace.current_dir` on stdin), unless `ui.statusLine` is set already: a
user's preset, command or `null` (status line off) is kept, and install says so.
Never a top-level `commands/doctor.md`: it would take over Qwen's built-in `/doctor`.
"""

from __future__ import annotations

from doctor.integrations import Location, Plan, edit_hook, edit_status_line
from doctor.integrations.files import add_to_list, json_settings, owned_file, remove_from_list
from doctor.sources.discovery import QWEN, agent_homes

COMMAND = """\
---
# Written by `doctor install qwen`; `doctor uninstall qwen` removes it.
description: doctor memory - what this session keeps in context (compact; full report in a 0600 file)
---
!{doctor slash qwen --args={{args}}}

Show the doctor summary above to the user as it is, then stop; do not run any tool.
"""
PERMISSION = "run_shell_command(doctor slash)"
ALLOW = ("permissions", "allow")


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    base = location.base(agent_homes(location.env)[QWEN], ".qwen")
    command = owned_file(base / "commands" / "doctor" / "memory.md", COMMAND if installing else None)

    def edit(settings: dict) -> None:
        if installing:
            add_to_list(settings, ALLOW, PERMISSION)
        else:
            remove_from_list(settings, ALLOW, lambda rule: rule != PERMISSION)
        edit_hook(settings, "qwen", "PostToolUse", installing=installing,
                  tell_model=options.get("tell_model", False), matcher="*", timeout=30)
        edit_status_line(settings, ("ui", "statusLine"), "qwen", installing=installing, notes=notes)

    notes = ["type /doctor:memory in Qwen Code; the status line shows the tool output kept in context"] \
        if installing else []
    return Plan([command, json_settings(base / "settings.json", edit)], notes)
