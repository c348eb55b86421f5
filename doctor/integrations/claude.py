"""Claude Code: `/doctor:memory` as a custom slash command.

`<base>/commands/doctor/memory.md` (`~/.claude` or `$CLAUDE_CONFIG_DIR` for `--user`,
`<project>/.claude` for `--project`) becomes `/doctor:memory`. Its `!`-backquoted line runs
`doctor slash claude` and the output joins the prompt. Claude expands `${CLAUDE_SESSION_ID}` and
`$ARGUMENTS` before running it, but refuses a line that reads any other variable, and in `-p`
mode runs it only with `allowed-tools: Bash(doctor:*)` in the front matter (otherwise it is
silently skipped).

`settings.json` in the same folder gets a `PostToolUse` hook (every tool) running `doctor hook
claude`: the oversized alarm as a `systemMessage` (and, with `--tell-model`, `additionalContext`),
and `statusLine: {type: command, command: "doctor statusline claude"}` unless the user has a
status line already (theirs is kept, and install says so).
"""

from __future__ import annotations

from doctor.integrations.plans import Location, Plan, edit_hook, edit_status_line
from doctor.integrations.files import json_settings, owned_file
from doctor.sources.discovery import CLAUDE, agent_homes

COMMAND = """\
---
# Written by `doctor install claude`; `doctor uninstall claude` removes it.
description: doctor memory - what this session keeps in context (compact; full report in a 0600 file)
argument-hint: "[--top N] [--paths short|full|hash]"
allowed-tools: Bash(doctor:*)
---
!`doctor slash claude --session ${CLAUDE_SESSION_ID} --args="$ARGUMENTS"`

Show the doctor summary above to the user as it is, then stop; do not run any tool.
"""


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    base = location.base(agent_homes(location.env)[CLAUDE], ".claude")
    command = owned_file(base / "commands" / "doctor" / "memory.md", COMMAND if installing else None, location.within)

    notes = ["type /doctor:memory in Claude Code; the status line shows the tool output kept in context, "
             "and an oversized tool result raises doctor's alarm"] if installing else []

    def edit(settings: dict) -> None:
        edit_hook(settings, "claude", "PostToolUse", installing=installing,
                  tell_model=options.get("tell_model", False), matcher="*", timeout=30)
        edit_status_line(settings, ("statusLine",), "claude", installing=installing, notes=notes,
                         wanted=options.get("statusline", True))

    return Plan([command, json_settings(base / "settings.json", edit, installing=installing, within=location.within)],
                notes)
