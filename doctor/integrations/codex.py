"""Codex: `/doctor:memory` answered by a `UserPromptSubmit` hook (Codex has no custom slash commands).

`hooks.json` (`~/.codex` or `$CODEX_HOME` for `--user`, `<project>/.codex` for `--project`, which
Codex reads only in a trusted project) gets one command hook, `doctor hook codex`. For a prompt
that starts with `/doctor:memory` it answers with `additionalContext` holding the summary of the
hook's own session (`transcript_path` on its stdin); for any other prompt it prints nothing.
Codex runs a new or changed hook only after the user trusted it (`/hooks` in the Codex TUI, or
`doctor install codex --trust`, which asks Codex to record it: `codex_trust`; `codex exec
--dangerously-bypass-hook-trust` skips it for one run), and says nothing otherwise.
The same command answers `PostToolUse` with the oversized alarm.
"""

from __future__ import annotations

from doctor.integrations.plans import Location, Plan, edit_hook
from doctor.integrations.files import json_settings
from doctor.sources.discovery import CODEX, agent_homes

EVENTS = ("UserPromptSubmit", "PostToolUse")


def plan(location: Location, *, installing: bool, options: dict) -> Plan:
    base = location.base(agent_homes(location.env)[CODEX], ".codex")

    def edit(settings: dict) -> None:
        for event in EVENTS:
            edit_hook(settings, "codex", event, installing=installing,
                      tell_model=options.get("tell_model", False), timeout=30)

    trust = [] if options.get("trust") else [
        "trust doctor's hook once: open `codex`, type /hooks, review and trust `doctor hook codex` "
        "(or install with --trust)"]
    notes = [*trust, "then type /doctor:memory in Codex (the hook answers it)"] if installing else []
    return Plan([json_settings(base / "hooks.json", edit, installing=installing, within=location.within)], notes)
