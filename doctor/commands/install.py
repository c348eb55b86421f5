"""`doctor install <agent>` / `doctor uninstall <agent>`: doctor inside Claude Code, Gemini CLI, Qwen Code, Codex.

Prints one line per file it created, updated or removed (and the backup it made), or the diff
with `--dry-run`, writing nothing then. The agents' commands run the doctor that ran the install,
by its absolute path (`doctor.integrations.program`): an agent's environment often lacks the
virtualenv's folder on PATH, and a bare `doctor` then failed after every tool call. `--trust` (Codex) then has Codex record the user's trust
in doctor's hook (`doctor.integrations.codex_trust`). A settings file that does not parse, or a file at one of
doctor's paths that doctor did not write, is refused: exit 2, one line naming it, nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from doctor import exitcodes
from doctor.integrations import AGENTS, PROJECT, USER
from doctor.integrations.plans import Location, plan
from doctor.integrations.files import Refused, apply


def register(subparsers) -> None:
    for name, installing in (("install", True), ("uninstall", False)):
        verb = "add" if installing else "remove"
        parser = subparsers.add_parser(
            name, help=f"{verb} /doctor:memory, its permission and the oversized-result hook in an agent",
            description=f"{verb.capitalize()} doctor's command files and settings entries for one agent.")
        parser.add_argument("agent", choices=AGENTS)
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--user", dest="scope", action="store_const", const=USER,
                           help="the agent's home folder (default)")
        scope.add_argument("--project", dest="scope", action="store_const", const=PROJECT,
                           help="the project's folder (.claude, .qwen, .gemini, .codex)")
        parser.add_argument("--project-dir", type=Path, default=None, metavar="DIR",
                            help="the project (default: the current directory)")
        parser.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
        if installing:
            parser.add_argument("--tell-model", action="store_true",
                                help="the oversized alarm also tells the model (additionalContext), not only you")
            parser.add_argument("--no-statusline", dest="statusline", action="store_false",
                                help="leave the agent's status line alone (Claude Code, Qwen Code: keeps Qwen's "
                                     "built-in default one); takes doctor's out if it was installed")
            parser.add_argument("--trust", action="store_true",
                                help="Codex: have Codex record your trust in doctor's hook (what /hooks does), "
                                     "through `codex app-server`; only doctor's own hook")
        parser.set_defaults(handler=run, installing=installing, scope=USER)


def run(args) -> int:
    command = "install" if args.installing else "uninstall"
    location = Location(args.scope, (args.project_dir or Path.cwd()).resolve())
    try:
        planned = plan(args.agent, location, installing=args.installing,
                       options={"tell_model": getattr(args, "tell_model", False),
                                "statusline": getattr(args, "statusline", True), "trust": getattr(args, "trust", False)})
    except Refused as exc:
        print(f"doctor {command}: refused: {exc}", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    trust = None
    from doctor.integrations.codex_trust import TrustFailed

    if getattr(args, "trust", False):
        if args.agent != "codex":
            print(f"doctor {command}: --trust is for Codex (the other agents run doctor's hook without it)", file=sys.stderr)
            return exitcodes.USAGE_OR_INPUT
        from doctor.integrations.codex_trust import CodexTrust

        trust = CodexTrust(location)
        try:
            trust.check()
        except (Refused, TrustFailed) as exc:
            print(f"doctor {command}: refused: {exc}", file=sys.stderr)
            return exitcodes.USAGE_OR_INPUT
    changed = [change for change in planned.changes if change.before != change.after]
    if args.dry_run:
        for change in changed:
            sys.stdout.write(change.diff())
            if change.link_target is not None:
                print(f"({change.path} is a symbolic link: the change would go to {change.link_target})")
        if trust is not None:
            print(f"would ask Codex to trust doctor's hook in {trust.config} (its own `codex app-server`)")
        print(f"doctor {command} {args.agent}: dry run, {len(changed)} file(s) would change, nothing written")
        return exitcodes.OK
    trusted: list[str] = []
    try:  # the trust needs the hook written; if Codex cannot record it, what was written goes back
        backups = apply(changed, then=None if trust is None else lambda: trusted.append(trust.apply()))
    except OSError as exc:
        print(f"doctor {command}: {getattr(exc, 'filename', '') or ''}: {exc.strerror or exc}", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    except TrustFailed as exc:
        print(f"doctor {command}: could not trust doctor's hook: {exc}; nothing was installed (what was written "
              "was put back); trust it with /hooks in Codex, or install without --trust", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    for change in planned.changes:
        print(f"{change.verb:9} {change.path}" + _details(change, backups.get(change.path)))
    if not changed:
        print(f"doctor {command} {args.agent}: already {'installed' if args.installing else 'absent'}, nothing changed")
    for line in trusted:
        print(line)
    if args.installing:
        if changed:
            print(f"runs      {location.program} (this doctor, by its full path: the agent needs no PATH to it; "
                  "install again if you move it)")
        for note in planned.notes:
            print(f"next: {note}")
    return exitcodes.OK


def _details(change, backup) -> str:
    """What install says beside a file's line: where its old bytes went, where a link led the change."""
    details = []
    if change.restored is not None:
        details.append(f"its bytes from {change.restored.name}")
    if backup is not None:
        details.append(f"backup: {backup.name}")
    if change.link_target is not None and change.before != change.after:
        details.append(f"written through the symbolic link to {change.link_target}")
    return f" ({'; '.join(details)})" if details else ""
