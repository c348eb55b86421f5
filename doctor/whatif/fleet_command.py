"""The `doctor scan` options of the fleet replay (`--whatif`, `--sweep`, `--recommend`, `--keep`) and their answer.

Kept apart from doctor/commands/scan.py, which only registers them and hands over: the answer reads the
database in one read-only transaction and never a session file (doctor/whatif/fleet.py). The scan stores the
replay inputs only when asked (`--replay`, or one of these answers given with PATH): replaying every session
costs about as much again as reading it, and most triage scans never ask what-if.
"""

from __future__ import annotations

DEFAULT_KEEP = 0.9


def register(parser) -> None:
    from doctor.commands.whatif import _share

    group = parser.add_argument_group("what if the budgets were different (from the database, no session re-read)")
    ask = group.add_mutually_exclusive_group()
    ask.add_argument("--whatif", metavar="KEY=VALUE",
                     help="every replayed session under one limit, per agent version and tool (KEY: the agent's own "
                          "name, e.g. tools.truncateToolOutputThreshold; VALUE `default` unsets it)")
    ask.add_argument("--sweep", metavar="KEY=A..B[:STEP]",
                     help="one fleet replay per value: a range (20 values when STEP is left out) or a list V1,V2,…")
    ask.add_argument("--recommend", action="store_true",
                     help="per agent version and tool, the smallest budget that keeps --keep of its results whole, "
                          "what it saves and the share of sessions it would have helped")
    group.add_argument("--keep", type=_share, default=DEFAULT_KEEP, metavar="SHARE",
                       help=f"share of results --recommend keeps whole (default {DEFAULT_KEEP})")
    group.add_argument("--replay", action="store_true",
                       help="with PATH: also store what these answers need, replaying each session read (about "
                            "twice the scan's work; files scanned before without it are read again). Implied when "
                            "--whatif, --sweep or --recommend is given with PATH")


def replay_wanted(args) -> bool:
    """Whether this scan stores the replay inputs: asked for, or needed by the answer it gives."""
    return bool(args.replay or args.whatif or args.sweep or args.recommend)


def answer_text(store, args) -> tuple[str | None, str | None]:
    """(the answer in args.format, None) or (None, a one-line reason for the user)."""
    import duckdb

    from doctor.whatif import fleet, fleet_layout
    from doctor.whatif.keys import SettingError
    from doctor.whatif.result import whatif_json

    cursor = store.db.cursor()
    try:
        cursor.execute("BEGIN TRANSACTION READ ONLY")
        try:
            data = fleet.answer(cursor, whatif=args.whatif, sweep=args.sweep,
                                recommend_keep=args.keep if args.recommend else None)
        finally:
            cursor.execute("ROLLBACK")
    except (fleet.FleetError, SettingError) as exc:
        return None, str(exc)
    except duckdb.Error as exc:
        return None, f"the database could not answer: {str(exc).splitlines()[0]}"
    finally:
        cursor.close()
    if args.format == "json":
        return whatif_json(data), None  # orjson: a sweep's answer has a row per value, version and tool
    return fleet_layout.document(data, args.format), None
