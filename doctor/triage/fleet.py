"""What the TUI's Fleet screen shows, read from the triage database once, as plain data.

The screen never runs SQL: it gets the sessions' rows and each tool's size histogram
(the half-decade bins the HTML charts use), and a function that turns a session's
stored path into a report provider for the memory screen when the file is still there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from doctor.triage.answers import SIZE_BIN

SESSION_FIELDS = ("session_key", "path", "source", "agent", "agent_version", "tool_results", "retained_tokens",
                  "largest_chars", "oversized", "spill_findings", "input_problems")


@dataclass(frozen=True)
class FleetData:
    sessions: list[dict]
    tools: list[dict]  # tool, results, chars, oversized, bins: [(bin, results)]
    database: str = ""
    skipped: int = 0
    meta: dict = field(default_factory=dict)


def load_fleet(store) -> FleetData:
    db = store.db
    cursor = db.execute(f"SELECT {', '.join(SESSION_FIELDS)} FROM counted_sessions ORDER BY coalesce(oversized, 0) DESC, "
                        "coalesce(retained_tokens, 0) DESC, path")
    sessions = [dict(zip(SESSION_FIELDS, row)) for row in cursor.fetchall()]
    tools = [{"tool": tool, "results": count, "chars": chars, "oversized": oversized, "bins": []}
             for tool, count, chars, oversized in db.execute(
                 "SELECT tool, count(*), sum(injected_chars), sum(oversized::INT) FROM counted_results GROUP BY tool "
                 "ORDER BY sum(injected_chars) DESC, tool").fetchall()]
    by_name = {tool["tool"]: tool for tool in tools}
    for tool, size_bin, count in db.execute(f"SELECT tool, {SIZE_BIN}, count(*) FROM counted_results GROUP BY ALL "
                                            "ORDER BY ALL").fetchall():
        by_name[tool]["bins"].append((size_bin, count))
    skipped = db.execute("SELECT count(*) FROM files WHERE status = 'skipped'").fetchone()[0]
    return FleetData(sessions, tools, str(store.path), skipped)


def session_provider(path: str):
    """A memory-screen provider for a stored path that names a file on this machine, else None."""
    if not path or not Path(path).is_file():
        return None
    from doctor.assemble import ReportOptions, report_for_session
    from doctor.sources.registry import open_session
    from doctor.tui.provider import CallableProvider

    def load(progress):
        progress(None, f"Reading {Path(path).name} and measuring every result…")
        session = open_session(Path(path))
        report = report_for_session(session, ReportOptions())
        progress(1.0, "ready")
        return report

    return CallableProvider(load)
