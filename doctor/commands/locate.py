"""Which session a command reads: PATH, the session named by --session, or the newest of the current directory.

Its own module so that `doctor whatif` finds its session without importing `doctor memory`'s command
module (the spill audit, the settings loaders and the renderers it needs, at ~20 ms of start-up).
"""

from __future__ import annotations

from pathlib import Path

from doctor.sources.base import SourceError


def locate(args) -> Path:
    """PATH, the session named by --session, or the newest session of the current directory."""
    if args.path is not None:
        return args.path
    from doctor.sources.discovery import find_sessions, newest_for_cwd

    if args.session:
        matches = [ref for ref in find_sessions(agent=args.agent) if ref.id == args.session]
        if not matches:
            raise SourceError(args.session, "no session with this id" + (f" for {args.agent}" if args.agent else ""))
        return matches[0].path
    ref = newest_for_cwd(Path.cwd())
    if ref is None:
        raise SourceError(Path.cwd(), "no agent session found for this directory; pass a PATH (see `doctor sessions`)")
    return ref.path
