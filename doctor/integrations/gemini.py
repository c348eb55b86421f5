"""Gemini CLI: `/doctor:memory` as a custom TOML command, allowed by a policy rule.

`<base>/commands/doctor/memory.toml` (`~/.gemini`, or `$GEMINI_CLI_HOME/.gemini`, or
`<project>/.gemini`) becomes `/doctor:memory`; its `!{…}` runs `doctor slash gemini` with the
typed arguments shell-quoted (`{{args}}`). Gemini runs it only when a policy allows it (or with
`--yolo`): `<base>/policies/doctor.toml` holds one `allow` rule for `run_shell_command` matching
that exact form, `doctor slash gemini --args=<one shell word>` and nothing after it (Gemini tests a
`commandRegex` against `"command":"<command>"` in its JSON of the call's arguments, each pair
ending in a NUL: the rule ends there). A prefix rule would also let the model run `doctor slash
gemini --transcript <any file>` unasked. Gemini passes the command no session id: `settings.json`
gets a `SessionStart` hook running `doctor hook gemini`, which records the session of that Gemini
process (`doctor.integrations.current`) for the command to find, and an `AfterTool` hook (the
oversized alarm).
"""

from __future__ import annotations

import json
import re

from doctor.integrations.plans import SHOW_AS_IS, Location, Plan, edit_hook
from doctor.integrations.files import Comments, json_settings, owned_file
from doctor.sources.discovery import GEMINI, agent_homes

def command_file(program: str) -> str:
    """`commands/doctor/memory.toml`, running `program` (the doctor that installed it)."""
    in_toml = program.replace("\\", "\\\\").replace('"', '\\"')  # inside a TOML "…" string
    return f'''\
# Written by `doctor install gemini`; `doctor uninstall gemini` removes it.
description = "doctor memory - what this session keeps in context (compact; full report in a 0600 file)"
prompt = """
!{{{in_toml} slash gemini --args={{{{args}}}}}}

{SHOW_AS_IS}
"""
'''


# One shell word as Gemini CLI writes `{{args}}` (shell-quote's `quote`): nothing, '…' (no quote or
# backslash inside), or a bare word (an `=` comes escaped). Anything else asks the user first.
TYPED_WORD = r"""(?:'[^'\\]*'|[A-Za-z0-9_./%+-]*|[A-Za-z0-9_./%+-]*\\\\=[A-Za-z0-9_./%+-]*)"""


def policy(program: str) -> str:
    """`policies/doctor.toml`: the one rule that lets the command file's exact form run unasked."""
    return f"""\
# Written by `doctor install gemini`; `doctor uninstall gemini` removes it.
# Lets /doctor:memory run `{program} slash gemini --args=<what you typed>` without asking; nothing else.
[[rule]]
toolName = "run_shell_command"
commandRegex = '''{_literal(json.dumps(program, ensure_ascii=False)[1:-1])} slash gemini --args={TYPED_WORD}"\\x00'''
decision = "allow"
priority = 100
"""


def _literal(text: str) -> str:
    """`text` as a JavaScript regular expression matching it literally (Gemini compiles the rule's regex)."""
    return re.sub(r"[\\^$.*+?()[\]{}|/]", lambda match: "\\" + match.group(), text)


# Gemini CLI strips comments from settings.json before JSON.parse (strip-json-comments), and reads it
# with readFileSync(…, "utf-8"), which keeps a leading byte order mark: JSON.parse then fails on it.
READS_COMMENTS = Comments("Gemini CLI", bom=False)


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    base = location.base(agent_homes(location.env)[GEMINI], ".gemini")
    program = location.program

    def edit(settings: dict) -> None:
        for event in ("SessionStart", "AfterTool"):
            edit_hook(settings, "gemini", event, program, installing=installing,
                      tell_model=options.get("tell_model", False), matcher="*", timeout=30000)

    return Plan([
        owned_file(base / "commands" / "doctor" / "memory.toml", command_file(program) if installing else None,
                   location.within),
        owned_file(base / "policies" / "doctor.toml", policy(program) if installing else None, location.within),
        json_settings(base / "settings.json", edit, READS_COMMENTS, installing=installing, within=location.within),
    ], ["type /doctor:memory in Gemini CLI"] if installing else [])
