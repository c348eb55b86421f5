"""What the TUI's Fleet screen shows, read from the triage database once, as plain data.

The screen never runs SQL: it gets the sessions' rows and each tool's size histogram
(the bins the HTML charts and the metrics use, `triage.bins`), and a function that turns a session's
stored path into a report provider for the memory screen when the file is still there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from doctor.triage.answers import SIZE_BIN

SESSION_FIELDS = ("session_key", "path", "source", "agent", "agent_version", "session_id", "tool_results",
                  "retained_tokens", "largest_chars", "oversized", "spill_findings", "input_problems")


@dataclass(frozen=True)
class FleetData:
    sessions: list[dict]
    tools: list[dict]  # tool, results, chars, oversized, bins: [(bin, results)]; every session's
    database: str = ""
    skipped: int = 0
    meta: dict = field(default_factory=dict)
    # (session_key, tool, bin, results, chars, oversized): what the tools panel sums over the sessions a
    # filter keeps, so that it follows the filter (`tools_of`).
    session_tools: list[tuple] = field(default_factory=list)


def load_fleet(store) -> FleetData:
    db = store.db
    cursor = db.execute(f"SELECT {', '.join(SESSION_FIELDS)} FROM counted_sessions "
                        "ORDER BY coalesce(oversized, 0) DESC, coalesce(retained_tokens, 0) DESC, path")
    sessions = [dict(zip(SESSION_FIELDS, row)) for row in cursor.fetchall()]
    session_tools = db.execute(f"SELECT session_key, tool, {SIZE_BIN}, count(*), sum(injected_chars), "
                               "sum(oversized::INT) FROM counted_results GROUP BY ALL ORDER BY ALL").fetchall()
    skipped = db.execute("SELECT count(*) FROM files WHERE status = 'skipped'").fetchone()[0]
    return FleetData(sessions, tools_of(session_tools), str(store.path), skipped, session_tools=session_tools)


def tools_of(session_tools: list[tuple], keys: set[str] | None = None) -> list[dict]:
    """Per tool, over the sessions `keys` (None: all): results, chars, oversized and the size bins, the
    tools with the most injected chars first."""
    tools: dict[str, dict] = {}
    for key, tool, size_bin, count, chars, oversized in session_tools:
        if keys is not None and key not in keys:
            continue
        entry = tools.setdefault(tool, {"tool": tool, "results": 0, "chars": 0.0, "oversized": 0, "bins": {}})
        entry["results"] += count
        entry["chars"] += chars
        entry["oversized"] += oversized
        entry["bins"][size_bin] = entry["bins"].get(size_bin, 0) + count
    for entry in tools.values():
        entry["bins"] = sorted(entry["bins"].items())
    return sorted(tools.values(), key=lambda entry: (-entry["chars"], entry["tool"]))


def session_provider(path: str):
    """A memory-screen provider for a stored path that names a file on this machine, or a member
    (`archive!member`) of an archive on this machine, else None (`why_not_open` says why)."""
    if not path:
        return None
    if Path(path).is_file():
        return _provider(Path(path).name, lambda read: read(Path(path)))
    archive, member = archive_member(path)
    if archive is None:
        return None

    def from_archive(read):
        """The archive unpacked as a scan unpacks it (archives.unpack: its caps, a private folder removed
        on the way out), and the member's copy read before the folder goes."""
        from doctor.triage.archives import Unpacked, unpack

        with Unpacked() as into:
            found = next((m for m in unpack(Path(archive), into).members if m.name == member), None)
            if found is None or found.path is None:
                raise OSError(f"{member}: not in {archive} any more, or left out "
                              f"({found.reason if found else 'no such member'})")
            return read(found.path)

    return _provider(Path(member).name, from_archive)


def _provider(name: str, locate):
    from doctor.assemble import ReportOptions, report_for_session
    from doctor.sources.registry import open_session
    from doctor.tui.provider import CallableProvider

    def load(progress):
        progress(None, f"Reading {name} and measuring every result…")
        report = locate(lambda path: report_for_session(open_session(path), ReportOptions()))
        progress(1.0, "ready")
        return report

    return CallableProvider(load)


def archive_member(path: str) -> tuple[str | None, str | None]:
    """(archive, member) for a stored `archive!member` whose archive is a file here, else (None, None)."""
    from doctor.triage.archives import is_archive

    at = path.find("!")
    while at > 0:
        archive = path[:at]
        if is_archive(Path(archive)) and Path(archive).is_file():
            return archive, path[at + 1:]
        at = path.find("!", at + 1)
    return None, None


def why_not_open(path: str) -> str:
    """Why a stored path cannot be opened, in words the user can act on."""
    if not path:
        return "this session has no stored path"
    if path.startswith(("/…", "~", "sha256:", "…")) or "/…/" in path:
        return (f"{path} was stored shortened (--paths short or hash); scan again with --paths full "
                "to open sessions from here")
    return f"{path} is not on this machine any more (moved, deleted or unreadable)"
