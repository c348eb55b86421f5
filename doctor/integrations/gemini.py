"""Gemini CLI: `/doctor:memory` as a custom TOML command, allowed by a policy rule.

`<base>/commands/doctor/memory.toml` (`~/.gemini`, or `$GEMINI_CLI_HOME/.gemini`, or
`<project>/.gemini`) becomes `/doctor:memory`; its `!{…}` runs `doctor slash gemini` with the
typed arguments shell-quoted (`{{args}}`). Gemini runs it only when a policy allows it (or with
`--yolo`): `<base>/policies/doctor.toml` holds one `allow` rule for `run_shell_command` with the
command prefix `doctor slash gemini`. Gemini passes the command no session id: `settings.json` gets a
`SessionStart` hook running `doctor hook gemini`, which records the session of that Gemini process
(`doctor.integrations.current`) for the command to find, and an `AfterTool` hook (the oversized alarm).
"""

from __future__ import annotations

from doctor.integrations.plans import Location, Plan, edit_hook
from doctor.integrations.files import Comments, json_settings, owned_file
from doctor.sources.discovery import GEMINI, agent_homes

COMMAND = '''\
# Written by `doctor install gemini`; `doctor uninstall gemini` removes it.
description = "doctor memory - what this session keeps in context (compact; full report in a 0600 file)"
prompt = """
!{doctor slash gemini --args={{args}}}

Show the doctor summary above to the user as it is, then stop; do not run any tool.
"""
'''
POLICY = '''\
# Written by `doctor install gemini`; `doctor uninstall gemini` removes it.
# Lets /doctor:memory run `doctor slash gemini …` without asking.
[[rule]]
toolName = "run_shell_command"
commandPrefix = "doctor slash gemini"
decision = "allow"
priority = 100
'''


# Gemini CLI strips comments from settings.json before JSON.parse (strip-json-comments), and reads it
# with readFileSync(…, "utf-8"), which keeps a leading byte order mark: JSON.parse then fails on it.
READS_COMMENTS = Comments("Gemini CLI", bom=False)


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    base = location.base(agent_homes(location.env)[GEMINI], ".gemini")
    def edit(settings: dict) -> None:
        for event in ("SessionStart", "AfterTool"):
            edit_hook(settings, "gemini", event, installing=installing,
                      tell_model=options.get("tell_model", False), matcher="*", timeout=30000)

    return Plan([
        owned_file(base / "commands" / "doctor" / "memory.toml", COMMAND if installing else None, location.within),
        owned_file(base / "policies" / "doctor.toml", POLICY if installing else None, location.within),
        json_settings(base / "settings.json", edit, READS_COMMENTS, installing=installing, within=location.within),
    ], ["type /doctor:memory in Gemini CLI"] if installing else [])
