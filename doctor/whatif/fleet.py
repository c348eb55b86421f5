"""`doctor scan --whatif KEY=VALUE | --sweep … | --recommend`: the replay over a triage database, per agent version and tool.

It reads only the tables the scan wrote for it (doctor/triage/replay_inputs.py), never a session file.
Per value of the key and per agent, agent version and tool: the sessions and results, the context the
value would have saved (chars, and tokens as chars ÷ 4 rounded up, one yardstick across agents, per later turn: each model
request re-sends every earlier result; summed over the turns that followed each result; and per
session), the results cut before and after, the results whose size the recordings do not determine.

Exactness. At a value the scan sampled (doctor/whatif/samples.py: GRIDS) every size is the exact
per-session replay's (`doctor whatif --json`'s `changes`). Between two sampled values a result's size is
interpolated linearly between its sizes there, which bound it (a limit raised never shrinks a result):
`estimateBound` is the sum of the widest miss each result could have, and `exact` says whether it is 0.
A result unknown at either neighbour counts as unknown and keeps its recorded size, and `couldBeOffBy`
adds its range, as the per-session replay does. `resultsCut` is one number at a sampled value and the
neighbours' range between two: being cut is not monotone in a limit (Qwen's read_file pages itself
under a low threshold, which is no cut, and meets the batch budget under a higher one), so the range
counts a result as possibly cut when either neighbour cuts it, and surely cut when both do.
tests/whatif/test_fleet.py measures the interpolation's error on the real recordings against the exact
replay and checks it never exceeds the stated bound.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from doctor.whatif.keys import DEFAULT
from doctor.whatif.thin_data import MIN_RESULTS, too_few
from doctor.whatif.samples import GRID_VERSION, GRIDS, Grid



class FleetError(ValueError):
    """A question the database cannot answer (a key no agent has or none was sampled for, no replay rows)."""


@dataclass(frozen=True, slots=True)
class Point:
    """Where one value falls on an agent's grid: sample indexes (1-based, as DuckDB lists count) and weight."""

    value: float | None  # None: `default`
    lo: int
    hi: int
    t: float
    between: tuple[float, float | None] | None  # the sampled values around it (None: exact)


def locate(grid: Grid, value: float | None) -> Point:
    """The samples around `value`; refuses a value below the grid (nothing bounds it from below)."""
    count = len(grid.values)
    if value is None:
        return Point(None, count + 2, count + 2, 0.0, None)
    if (value <= 0) if grid.unlimited_at_or_below_zero else (value >= grid.top):
        return Point(value, count + 1, count + 1, 0.0, None)
    if value in grid.values:
        index = grid.values.index(value) + 1
        return Point(value, index, index, 0.0, None)
    if value < grid.values[0]:
        raise FleetError(f"the database holds this key's replay from {grid.values[0]:,} up; {value:,} is below it "
                         "(`doctor whatif SESSION --set` replays one session at any value)")
    below = bisect.bisect_left(grid.values, value)
    if below == count:  # above the largest value: between it and "no limit", where no line joins them
        return Point(value, count, count + 1, 0.0, (grid.values[-1], None))
    low, high = grid.values[below - 1], grid.values[below]
    return Point(value, below, below + 1, (value - low) / (high - low), (low, high))


def _modules_with(key: str) -> dict[str, object]:
    """agent -> its replay module, for every agent doctor replays that has a limit named `key`."""
    from doctor.whatif.replay import AGENTS, agent_module

    modules = {agent: agent_module(agent) for agent in AGENTS}
    return {agent: module for agent, module in modules.items() if any(k.name == key for k in module.KEYS)}


def parse_values(whatif: str | None, sweep: str | None) -> tuple[str, dict[str, list[float | None]]]:
    """The key, and agent -> the values as that agent reads them (`doctor whatif`'s own `--set`/`--sweep`
    parsing, with each agent's keys), for the agents whose `key` the scan sampled."""
    from doctor.whatif.keys import parse_sets, parse_sweep

    key = (whatif if whatif is not None else sweep).partition("=")[0].strip()
    modules = _modules_with(key)
    if not modules:
        known = sorted({name for (_, name) in GRIDS})
        raise FleetError(f"no agent doctor replays has a limit {key!r}; the database samples: {', '.join(known)}")
    sampled = {agent: module for agent, module in modules.items() if (agent, key) in GRIDS}
    if not sampled:
        raise FleetError(f"{key} acts across a whole session's history; the database holds no replay of it "
                         "(`doctor whatif SESSION --set` replays it per session)")
    values = {}
    for agent, module in sampled.items():
        client = f"{module.CLIENT} {module.VERSION}"
        values[agent] = (list(parse_sets([whatif], module.KEYS, client).values()) if whatif is not None
                         else parse_sweep(sweep, module.KEYS, client)[1])
    return key, values


# -- reading the database

def _has_tables(db) -> bool:
    names = {row[0] for row in db.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    return {"replay_sessions", "replay_keys", "replay_results", "replay_samples"} <= names


def coverage(db) -> dict:
    """How many sessions the answers cover, and why the others are left out."""
    total = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    if not _has_tables(db):
        return {"sessions": total, "replayed": 0, "notReplayed": [{"reason": "scanned without --replay: scan again "
                                                                             "with --replay", "sessions": total}]}
    replayed = db.execute("SELECT count(*) FROM replay_sessions WHERE reason IS NULL AND grid_version = ?",
                          [GRID_VERSION]).fetchone()[0]
    reasons = db.execute("""
        SELECT coalesce(p.reason, CASE WHEN s.source = 'report' THEN 'a pasted report (it holds no outputs to replay)'
                                       WHEN p.session_key IS NULL THEN 'scanned without --replay: scan again with '
                                    || '--replay (only these files are read again)'
                                       ELSE 'sampled on another grid version: re-scan' END) AS reason, count(*)
        FROM sessions s LEFT JOIN replay_sessions p USING (session_key)
        WHERE p.session_key IS NULL OR p.reason IS NOT NULL OR p.grid_version <> ?
        GROUP BY ALL ORDER BY 2 DESC, 1""", [GRID_VERSION]).fetchall()
    return {"sessions": total, "replayed": replayed,
            "notReplayed": [{"reason": reason, "sessions": count} for reason, count in reasons]}


_KEYED = """
    keyed AS (
        SELECT k.session_key, s.agent, coalesce(s.agent_version, '') AS agent_version
        FROM replay_keys k JOIN replay_sessions p USING (session_key) JOIN sessions s USING (session_key)
        WHERE k.key = $key AND p.agent = $agent AND p.grid_version = $version AND k.grid = $grid::DOUBLE[]
    )"""


def _constant(db, agent: str, key: str, grid: Grid) -> list[tuple]:
    """Per agent version and tool: sessions, results, results cut as recorded, results sampled."""
    return db.execute(f"""
        WITH {_KEYED}
        SELECT agent_version, r.tool, count(DISTINCT r.session_key), count(*), sum(r.recorded_cut::INT)
        FROM replay_results r JOIN keyed USING (session_key)
        GROUP BY ALL""", _params(agent, key, grid)).fetchall()


def _session_counts(db, agent: str, key: str, grid: Grid) -> dict[str, int]:
    """agent version ('' when unknown) -> sessions replayed under this key (with results or not)."""
    return dict(db.execute(f"WITH {_KEYED} SELECT agent_version, count(*) FROM keyed GROUP BY ALL",
                           _params(agent, key, grid)).fetchall())


def _params(agent: str, key: str, grid: Grid) -> dict:
    return {"key": key, "agent": agent, "version": GRID_VERSION, "grid": [float(v) for v in grid.values]}


def _points_sql(points: Sequence[Point]) -> str:
    return "VALUES " + ", ".join(f"({n}, {p.lo}, {p.hi}, {p.t!r})" for n, p in enumerate(points))


_SUMS = ("saved", "over", "cut_min", "cut_max", "unknown", "bound", "unbounded", "off", "cut_recorded", "bound_turns",
         "changed", "helped")


def _sampled(db, agent: str, key: str, grid: Grid, points: Sequence[Point], tool: str | None = None) -> dict:
    """(point, agent version, tool or None for all tools) -> what the sampled results change there (a dict of
    _SUMS; the results without samples change nothing). Summed by DuckDB: the answer's work is one pass over
    the samples of this key, whatever the number of sessions."""
    only_tool = "AND r.tool = $tool" if tool is not None else ""
    params = _params(agent, key, grid) | ({"tool": tool} if tool is not None else {})
    rows = db.execute(f"""
        WITH {_KEYED},
        p(point, lo, hi, t) AS ({_points_sql(points)}),
        x AS (
            SELECT p.point, keyed.agent_version, r.tool, r.session_key, r.recorded_chars AS recorded, r.later_turns,
                   r.recorded_cut, m.after[p.lo] AS a_lo, m.after[p.hi] AS a_hi, m.low[p.lo] AS l_lo,
                   m.high[p.hi] AS h_hi, m.cut[p.lo] AS c_lo, m.cut[p.hi] AS c_hi, p.t
            FROM replay_samples m JOIN keyed USING (session_key)
            JOIN replay_results r ON r.session_key = m.session_key AND r.ordinal = m.ordinal
            CROSS JOIN p
            WHERE m.key = $key {only_tool}
        ),
        y AS (
            SELECT *, (a_lo IS NOT NULL AND a_hi IS NOT NULL) AS known,
                   CASE WHEN a_lo IS NOT NULL AND a_hi IS NOT NULL THEN round(a_lo + (a_hi - a_lo) * t)::BIGINT
                        ELSE recorded END AS est
            FROM x
        ),
        per_session AS (
            SELECT point, agent_version, tool, session_key,
                   sum(recorded - est) AS saved,
                   sum(CASE WHEN known THEN (recorded - est) * later_turns ELSE 0 END) AS over_turns,
                   sum(CASE WHEN known THEN c_lo AND c_hi ELSE c_lo AND c_hi AND recorded_cut END::INT) AS cut_min,
                   sum(CASE WHEN known THEN c_lo OR c_hi ELSE c_lo OR c_hi OR recorded_cut END::INT) AS cut_max,
                   sum((NOT known)::INT) AS unknown,
                   sum(CASE WHEN known THEN greatest(est - a_lo, a_hi - est) ELSE 0 END) AS bound,
                   bool_or(NOT known AND h_hi IS NULL) AS unbounded,
                   sum(CASE WHEN NOT known THEN greatest(coalesce(h_hi, 0) - recorded, recorded - l_lo) ELSE 0 END) AS off,
                   sum((known AND est < recorded)::INT) AS smaller,
                   sum((recorded_cut AND known AND NOT c_lo)::INT) AS kept_whole,
                   sum(recorded_cut::INT) AS cut_recorded,
                   sum(CASE WHEN known THEN greatest(est - a_lo, a_hi - est) * later_turns ELSE 0 END) AS bound_turns
            FROM y GROUP BY ALL
        )
        SELECT point, agent_version, tool, sum(saved), sum(over_turns), sum(cut_min), sum(cut_max), sum(unknown),
               sum(bound), bool_or(unbounded), sum(off), sum(cut_recorded), sum(bound_turns),
               count(DISTINCT session_key) FILTER (WHERE saved <> 0 OR kept_whole > 0),
               count(DISTINCT session_key) FILTER (WHERE smaller > 0 OR kept_whole > 0)
        FROM per_session GROUP BY GROUPING SETS ((point, agent_version, tool), (point, agent_version))""",
                      params).fetchall()
    return {(point, version, tool): dict(zip(_SUMS, sums)) for point, version, tool, *sums in rows}


def _tokens(chars: float) -> int:
    """Qwen's estimate (chars / 4, rounded up) of a difference, keeping its sign (as `doctor whatif`)."""
    from doctor.core.estimator import tokens_for_chars

    return tokens_for_chars(chars) if chars >= 0 else -tokens_for_chars(-chars)


def _group(agent: str, version: str, tool: str | None, sessions: int, results: int, cut_before: int,
           sums: dict | None) -> dict:
    """One row of the answer: the results' own figures (`results`, `cut_before`) and what the samples change."""
    sums = {name: (sums or {}).get(name) or 0 for name in _SUMS}
    changed_cut = cut_before - sums["cut_recorded"]
    return {
        "agent": agent, "agentVersion": version or None, "tool": tool, "sessions": sessions, "results": results,
        "sessionsChanged": int(sums["changed"]),
        "savedChars": int(sums["saved"]), "savedTokensPerLaterTurn": _tokens(sums["saved"]),
        "savedTokensPerSession": round(_tokens(sums["saved"]) / sessions, 1) if sessions else None,
        "savedCharsOverLaterTurns": int(sums["over"]), "savedTokensOverLaterTurns": _tokens(sums["over"]),
        "resultsCutBefore": cut_before,
        "resultsCut": {"atLeast": int(changed_cut + sums["cut_min"]), "atMost": int(changed_cut + sums["cut_max"])},
        "resultsUnknown": int(sums["unknown"]),
        "exact": sums["bound"] == 0 and sums["unknown"] == 0,
        "estimateBound": int(sums["bound"]),
        "estimateBoundOverLaterTurns": int(sums["bound_turns"]),
        "couldBeOffBy": {"chars": None if sums["unbounded"] else int(sums["off"] + sums["bound"])},
    }


def evaluate(db, key: str, values: dict[str, list[float | None]]) -> list[dict]:
    """Per value (in the order given): its groups per agent, agent version and tool, and per agent version."""
    answer = []
    per_value: list[list[dict]] = [[] for _ in next(iter(values.values()))]
    notes: list[list[str]] = [[] for _ in per_value]
    for agent, agent_values in values.items():
        grid = GRIDS[agent, key]
        points = [locate(grid, value) for value in agent_values]
        session_counts = _session_counts(db, agent, key, grid)
        if not session_counts:
            continue
        constant = _constant(db, agent, key, grid)
        sampled = _sampled(db, agent, key, grid, points)
        for n, point in enumerate(points):
            per_value[n].extend(_rows_of_point(agent, n, constant, session_counts, sampled))
            if point.between is not None:
                low, high = point.between
                notes[n].append(f"{agent}: between the sampled values {low:,g} and "
                                f"{'no limit' if high is None else f'{high:,g}'} (interpolated, bounded)")
    for n, rows in enumerate(per_value):
        value = next(iter(values.values()))[n]
        answer.append({"value": DEFAULT if value is None else value, "notes": notes[n], "groups": rows})
    return answer


def _rows_of_point(agent: str, point: int, constant: list[tuple], session_counts: dict[str, int],
                   sampled: dict) -> list[dict]:
    """Each agent version's total (tool None), then its tools by what they save."""
    out = []
    for version in sorted(session_counts, key=_version_order):
        tools = [_group(agent, version, tool, sessions, results, cut, sampled.get((point, version, tool)))
                 for v, tool, sessions, results, cut in constant if v == version]
        out.append(_group(agent, version, None, session_counts[version], sum(r["results"] for r in tools),
                          sum(r["resultsCutBefore"] for r in tools), sampled.get((point, version, None))))
        out.extend(sorted(tools, key=lambda row: (-row["savedChars"], row["tool"])))
    return out


def _version_order(version: str | None) -> tuple:
    parts = []
    for piece in (version or "").replace("-", ".").split("."):
        parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return tuple(parts)


# -- recommend

def recommend(db, keep: float) -> list[dict]:
    """Per agent, agent version and tool: the smallest budget keeping `keep` of its sized results whole
    (nearest rank, as `doctor whatif --recommend`), what it saves for that tool and the share of sessions it
    would have helped (a result of the tool kept smaller, or kept whole where the session cut it)."""
    rows = db.execute("""
        SELECT p.agent, coalesce(s.agent_version, '') AS agent_version, r.tool, r.budget_key,
               list(r.budget_need ORDER BY r.budget_need, r.need_at_least) FILTER (WHERE r.budget_need IS NOT NULL),
               list(r.need_at_least ORDER BY r.budget_need, r.need_at_least) FILTER (WHERE r.budget_need IS NOT NULL),
               count(*), count(DISTINCT r.session_key)
        FROM replay_results r JOIN replay_sessions p USING (session_key) JOIN sessions s USING (session_key)
        WHERE p.reason IS NULL AND p.grid_version = ?
        GROUP BY ALL""", [GRID_VERSION]).fetchall()
    out = []
    for agent, version, tool, key, needs, at_least, results, sessions in rows:
        needs, at_least = needs or [], at_least or []
        item = {"agent": agent, "agentVersion": version or None, "tool": tool, "key": key, "results": results,
                "sessions": sessions, "sized": len(needs), "largestRawChars": _whole(needs[-1]) if needs else None,
                "budget": None, "note": ""}
        if key is None:
            item["note"] = "the client fixes this tool's budget; no key sets it"
        elif len(needs) < MIN_RESULTS:
            item["note"] = too_few(len(needs))
        else:
            rank = max(1, math.ceil(keep * len(needs)))
            item["budget"] = _whole(needs[rank - 1])
            if at_least[rank - 1]:
                item["note"] = ("at least: the recording keeps only part of that result, so keeping it whole may "
                                "need more")
            item.update(_helped(db, agent, version, tool, key, item["budget"]))
        out.append(item)
    out.sort(key=lambda row: (row["agent"], _version_order(row["agentVersion"]), -row["results"], row["tool"]))
    return out


def _helped(db, agent: str, version: str, tool: str, key: str, budget: float) -> dict:
    """What the budget does to this tool's results in this agent version's sessions (from the samples)."""
    grid = GRIDS.get((agent, key))
    if grid is None:
        return {"saved": None, "helpedSessions": None, "helpedShare": None}
    try:
        point = locate(grid, budget)
    except FleetError as exc:
        return {"saved": None, "helpedSessions": None, "helpedShare": None, "why": str(exc)}
    sessions = db.execute(f"""
        WITH {_KEYED} SELECT count(DISTINCT r.session_key) FROM replay_results r JOIN keyed USING (session_key)
        WHERE agent_version = $agent_version AND r.tool = $tool""",
        _params(agent, key, grid) | {"agent_version": version, "tool": tool}).fetchone()[0]
    sums = _sampled(db, agent, key, grid, [point], tool).get((0, version, tool))
    helped = int((sums or {}).get("helped") or 0)
    row = _group(agent, version, tool, sessions, 0, 0, sums)
    return {"saved": {name: row[name] for name in ("savedChars", "savedTokensPerLaterTurn", "savedTokensPerSession",
                                                   "exact", "estimateBound")},
            "helpedSessions": helped, "helpedShare": round(helped / sessions, 3) if sessions else None}


def _whole(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


# -- the whole answer

def answer(db, *, whatif: str | None = None, sweep: str | None = None, recommend_keep: float | None = None) -> dict:
    """The JSON-ready answer of `doctor scan --whatif/--sweep/--recommend`, read in one read-only transaction."""
    if not _has_tables(db):
        raise FleetError("this database holds no replay inputs (scanned by an older doctor); re-scan with --force "
                         "into it, or scan into a new --db")
    data: dict = {"coverage": coverage(db)}
    if recommend_keep is not None:
        data["recommend"] = {"keep": recommend_keep, "tools": recommend(db, recommend_keep)}
        return data
    key, values = parse_values(whatif, sweep)
    data["key"] = key
    data["sweep" if sweep is not None else "whatif"] = evaluate(db, key, values)
    return data
