"""`doctor scan --compare FIELD=A,B`: what changed between two groups of sessions (e.g. two agent versions).

Both sides are summarised the same way (sessions, results, oversized per 1,000, the
injected-size percentiles, the layers' shares), then every tool is set side by side
and the tools whose oversized rate or p90 moved most come first. A tool seen on one
side only is listed as new or gone; a value that matches no session is said so.
"""

from __future__ import annotations

from doctor.triage.versions import version_order

FIELDS = ("agent", "agent_version", "format", "source", "project_hash")


class CompareError(ValueError):
    """A --compare that cannot be answered (unknown field, malformed)."""


def parse(text: str) -> tuple[str, str, str]:
    field, sep, values = text.partition("=")
    a, comma, b = values.partition(",")
    if not sep or not comma or not a or not b or "," in b:
        raise CompareError(f"--compare {text!r}: expected FIELD=A,B (e.g. agent_version=0.24.3,0.24.4)")
    if field not in FIELDS:
        raise CompareError(f"--compare: unknown field {field!r} (choose from {', '.join(FIELDS)})")
    return field, a, b


def _side(db, field: str, value: str) -> dict:
    row = db.execute(f"""
        SELECT count(DISTINCT s.session_key) AS sessions, count(r.ordinal) AS results,
               coalesce(sum(r.oversized::INT), 0) AS oversized,
               round(1000.0 * sum(r.oversized::INT) / nullif(count(r.ordinal), 0), 1) AS per_1000,
               quantile_disc(r.injected_chars, [0.5, 0.9, 0.99]) AS q, max(r.injected_chars) AS chars_max,
               (SELECT coalesce(sum(retained_tokens), 0) FROM counted_sessions WHERE coalesce({field}, 'unknown') = $1)
                   AS tokens
        FROM counted_sessions s LEFT JOIN counted_results r USING (session_key) WHERE coalesce(s.{field}, 'unknown') = $1""", [value]).fetchone()
    sessions, results, oversized, per_1000, q, chars_max, tokens = row
    q = q or [None, None, None]
    layers = dict(db.execute(f"""
        SELECT r.layer, round(100.0 * count(*) / sum(count(*)) OVER (), 2)
        FROM counted_sessions s JOIN counted_results r USING (session_key) WHERE coalesce(s.{field}, 'unknown') = ? GROUP BY r.layer""", [value]).fetchall())
    return {
        "value": value, "sessions": sessions, "results": results, "oversized": oversized, "per_1000": per_1000,
        "chars_p50": q[0], "chars_p90": q[1], "chars_p99": q[2], "chars_max": chars_max,
        "tokens_per_session": round(tokens / sessions) if sessions else None, "layer_percent": layers,
    }


def _tools(db, field: str, a: str, b: str) -> list[dict]:
    rows = db.execute(f"""
        SELECT r.tool, coalesce(s.{field}, 'unknown') AS side, count(*) AS results, sum(r.oversized::INT) AS oversized,
               round(1000.0 * sum(r.oversized::INT) / count(*), 1) AS per_1000,
               quantile_disc(r.injected_chars, 0.9) AS chars_p90
        FROM counted_sessions s JOIN counted_results r USING (session_key) WHERE coalesce(s.{field}, 'unknown') IN (?, ?)
        GROUP BY ALL""", [a, b]).fetchall()
    tools: dict[str, dict] = {}
    for tool, side, results, oversized, per_1000, p90 in rows:
        entry = tools.setdefault(tool, {"tool": tool, "a": None, "b": None})
        entry["a" if side == a else "b"] = {"results": results, "oversized": oversized, "per_1000": per_1000,
                                            "chars_p90": p90}
    for entry in tools.values():
        entry["change"] = _change(entry["a"], entry["b"])
    return sorted(tools.values(), key=_order)


def _change(a: dict | None, b: dict | None) -> str:
    if a is None:
        return "new"
    if b is None:
        return "gone"
    parts = []
    if a["per_1000"] != b["per_1000"]:
        parts.append(f"oversized per 1,000 {a['per_1000']:.1f} → {b['per_1000']:.1f}")
    if a["chars_p90"] != b["chars_p90"]:
        ratio = b["chars_p90"] / a["chars_p90"] if a["chars_p90"] else None
        parts.append(f"p90 {a['chars_p90']:,.0f} → {b['chars_p90']:,.0f} chars"
                     + (f" (×{ratio:.2f})" if ratio is not None else ""))
    return "; ".join(parts) or "unchanged"


def _order(entry: dict) -> tuple:
    """New and gone tools first, then the largest move in oversized rate, then in p90, then the busiest."""
    a, b = entry["a"], entry["b"]
    if a is None or b is None:
        return (0, 0.0, 0.0, -(a or b)["results"], entry["tool"])
    rate = abs(b["per_1000"] - a["per_1000"])
    spread = abs(b["chars_p90"] - a["chars_p90"]) / max(a["chars_p90"], b["chars_p90"], 1)
    return (1, -rate, -spread, -(a["results"] + b["results"]), entry["tool"])


def values(db, field: str) -> list[str]:
    """The values `field` takes in the database (a missing value is "unknown"), most sessions first."""
    rows = db.execute(f"""SELECT coalesce({field}, 'unknown') AS value, count(*) FROM counted_sessions
                          GROUP BY ALL""").fetchall()
    return [value for value, _ in sorted(rows, key=lambda row: (-row[1], version_order(row[0])))[:20]]


def compare(db, field: str, a: str, b: str, top: int) -> dict:
    """Both sides and their tools. A side that matches no session is said so, with the values the field
    does take, and no tool is then called new or gone (there is nothing to compare it with)."""
    sides = {"a": _side(db, field, a), "b": _side(db, field, b)}
    unmatched = [side["value"] for side in sides.values() if not side["sessions"]]
    return {"field": field, **sides, "unmatched": unmatched, "values": values(db, field) if unmatched else [],
            "tools": [] if unmatched else _tools(db, field, a, b)[:top]}
