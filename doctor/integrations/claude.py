"""Claude Code: `/doctor:memory` as a custom slash command, answered by a `UserPromptExpansion` hook.

`<base>/commands/doctor/memory.md` (`~/.claude` or `$CLAUDE_CONFIG_DIR` for `--user`,
`<project>/.claude` for `--project`) becomes `/doctor:memory`. It runs no shell: a `!`-backquoted
line would get what the user typed through `$ARGUMENTS`, which Claude substitutes into the command
text before a shell reads it (`/doctor:memory $(touch /tmp/x)` ran the substitution, quotes or
not). Instead `settings.json` in the same folder gets a `UserPromptExpansion` hook (Claude Code
2.1.332 runs it when a typed slash command expands; matcher `doctor:memory`, the command's name)
running `doctor hook claude`: it receives the session (`session_id`, `transcript_path`) and the
typed arguments (`command_args`) as JSON on stdin, and answers with the summary as
`additionalContext`, which Claude adds to the command's prompt. The command file only tells the
model to show that summary as it is.

The same `settings.json` gets a `PostToolUse` hook (every tool) running `doctor hook claude`: the
oversized alarm as a `systemMessage` (and, with `--tell-model`, `additionalContext`), and
`statusLine: {type: command, command: "doctor statusline claude"}` unless the user has a status
line already (theirs is kept, and install says so).
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
---
doctor's hook adds its summary of this session's tool results to this command, as additional context
(or one line starting "doctor:" that says why there is none). Show that text to the user as it is, then
stop; do not run any tool. If no text of doctor's came with this command, doctor's hook did not run:
say so (`doctor install claude` puts it in settings.json), then stop.
"""
COMMAND_NAME = "doctor:memory"  # what Claude calls the command in `command_name` and the hook's matcher


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    base = location.base(agent_homes(location.env)[CLAUDE], ".claude")
    command = owned_file(base / "commands" / "doctor" / "memory.md", COMMAND if installing else None, location.within)

    notes = ["type /doctor:memory in Claude Code; the status line shows the tool output kept in context, "
             "and an oversized tool result raises doctor's alarm"] if installing else []

    def edit(settings: dict) -> None:
        edit_hook(settings, "claude", "PostToolUse", location.program, installing=installing,
                  tell_model=options.get("tell_model", False), matcher="*", timeout=30)
        edit_hook(settings, "claude", "UserPromptExpansion", location.program, installing=installing,
                  matcher=COMMAND_NAME, timeout=30)
        edit_status_line(settings, ("statusLine",), "claude", location.program, installing=installing, notes=notes,
                         wanted=options.get("statusline", True))

    return Plan([command, json_settings(base / "settings.json", edit, installing=installing, within=location.within)],
                notes)
