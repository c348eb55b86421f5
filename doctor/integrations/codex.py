"""Codex: `$doctor-memory` (a skill) and `/doctor:memory` (`codex exec`), answered by a `UserPromptSubmit` hook.

`hooks.json` (`~/.codex` or `$CODEX_HOME` for `--user`, `<project>/.codex` for `--project`, which
Codex reads only in a trusted project) gets one command hook, `doctor hook codex`. For a prompt
that starts with `$doctor-memory` or `/doctor:memory` it answers with `additionalContext` holding
the summary of the hook's own session (`transcript_path` on its stdin); for any other prompt it
prints nothing. Codex 0.171's interactive app has no custom slash commands: it rejects
`/doctor:memory` ("Unrecognized command") before any hook runs. What it offers instead is skills:
`<base>/skills/doctor-memory/SKILL.md` is listed when the user types `$` and sent with the prompt
`$doctor-memory`; its text tells the model to show the hook's summary as it is.
`agents/openai.yaml` beside it turns implicit invocation off, so Codex does not list the skill to
the model in every request (it costs context) and never picks it unasked.
Codex runs a new or changed hook only after the user trusted it (`/hooks` in the Codex TUI, or
`doctor install codex --trust`, which asks Codex to record it: `codex_trust`; `codex exec
--dangerously-bypass-hook-trust` skips it for one run), and says nothing otherwise.
The same command answers `PostToolUse` with the oversized alarm.
Codex runs the user's and a trusted project's hooks.json both: with doctor's hook in each, every
prompt and tool call would get two answers. So install refuses while the other scope has doctor's
hook (the user's when installing `--project`, this project's when installing `--user`), naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

from doctor.integrations import USER
from doctor.integrations.plans import Location, Plan, edit_hook, is_hook_command
from doctor.integrations.files import Refused, json_settings, owned_file, read_settings
from doctor.sources.discovery import CODEX, agent_homes

EVENTS = ("UserPromptSubmit", "PostToolUse")
SKILL = """\
---
# Written by `doctor install codex`; `doctor uninstall codex` removes it.
name: doctor-memory
description: "doctor memory - what this session keeps in context (compact; full report in a 0600 file). \
Arguments: [--top N] [--paths short|full|hash]"
---
doctor's hook answers the prompt `$doctor-memory` with its summary of this session's tool results (or
one line starting "doctor:" that says why there is none). Show that text to the user as it is, then
stop; do not run any tool.

If no text of doctor's came with the prompt, doctor's hook did not run: tell the user to trust it (type
/hooks in Codex and trust `doctor hook codex`, or run `doctor install codex --trust`), then stop.
"""
NOT_IMPLICIT = """\
# Written by `doctor install codex`; `doctor uninstall codex` removes it.
# Only when the user types $doctor-memory: never picked by the model, never listed in its context.
policy:
  allow_implicit_invocation: false
"""


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    home = agent_homes(location.env)[CODEX]
    base = location.base(home, ".codex")
    if installing:
        other = location.project / ".codex" if location.scope == USER else home
        # (from the home folder, the project's .codex is the user's own: one file, no second run)
        if other.resolve() != base.resolve() and _has_doctors_hook(other / "hooks.json"):
            scope = "--project" if location.scope == USER else "--user"
            raise Refused(other / "hooks.json", "already runs doctor's hook, and Codex runs both hooks.json files "
                          "(two answers to every prompt and tool call); keep one: `doctor uninstall codex "
                          f"{scope}` first, or keep that one")
    skill = base / "skills" / "doctor-memory"

    def edit(settings: dict) -> None:
        for event in EVENTS:
            edit_hook(settings, "codex", event, location.program, installing=installing,
                      tell_model=options.get("tell_model", False), timeout=30)

    trust = [] if options.get("trust") else [
        "trust doctor's hook once: open `codex`, type /hooks, review and trust `doctor hook codex` "
        "(or install with --trust)"]
    notes = [*trust, "then type $doctor-memory in Codex (`codex exec`: /doctor:memory); doctor's hook answers it"] \
        if installing else []
    return Plan([
        owned_file(skill / "SKILL.md", SKILL if installing else None, location.within),
        owned_file(skill / "agents" / "openai.yaml", NOT_IMPLICIT if installing else None, location.within),
        json_settings(base / "hooks.json", edit, installing=installing, within=location.within),
    ], notes)


def _has_doctors_hook(path: Path) -> bool:
    """Whether the hooks.json at `path` has a handler running doctor's Codex hook (a file that is not JSON: no)."""
    try:
        text = read_settings(path)[0]
        hooks = json.loads(text).get("hooks") if text else None
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(hooks, dict) and any(
        isinstance(handler, dict) and is_hook_command(handler.get("command"), "codex")
        for groups in hooks.values() if isinstance(groups, list)
        for group in groups if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"])
