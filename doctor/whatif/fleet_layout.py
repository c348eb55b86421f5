"""`doctor scan --whatif/--sweep/--recommend`'s answer laid out as report sections (text, Markdown, HTML).

Built from the JSON-ready dict of `fleet.answer`, so every format shows `--json`'s figures. Tool names
and versions come from sessions: they are made inert here.
"""

from __future__ import annotations

from doctor.report.figures import figure
from doctor.report.sections import Paragraph, Section, Table
from doctor.triage.layout import _name

TITLE = "doctor scan — what if the budgets were different"


def _cut(cut: dict) -> str:
    low, high = cut["atLeast"], cut["atMost"]
    return figure(low) if low == high else f"{figure(low)}–{figure(high)}"


def _off(row: dict) -> str:
    off = row["couldBeOffBy"]["chars"]
    if row["exact"]:
        return "exact"
    return "± unbounded" if off is None else f"± {figure(off)}"


def _coverage(data: dict) -> Section:
    coverage = data["coverage"]
    text = f"{coverage['replayed']:,} of {coverage['sessions']:,} sessions in the database have replay inputs."
    left = "; ".join(f"{_name(item['reason'])} ({item['sessions']:,})" for item in coverage["notReplayed"])
    blocks = [Paragraph(text + (f" Left out: {left}." if left else ""))]
    blocks.append(Paragraph(
        "Saved context is in chars, and in tokens as chars ÷ 4 (one yardstick across agents: each agent's own "
        "estimate differs a little), per later turn (each request re-sends every earlier result), per session and summed over the turns that followed each result. At a value the scan sampled every "
        "figure is the exact replay's; between two sampled values sizes are interpolated and ± says by how much the "
        "totals could be off (with the results whose size the recordings do not keep)."))
    return Section("Coverage", tuple(blocks))


_COLUMNS = ("agent", "version", "tool", "sessions", "changed", "results", "tokens saved / later turn",
            "per session", "over later turns", "cut before", "cut after", "unknown", "exactness")


def _row(row: dict, value=None) -> tuple:
    cells = (_name(row["agent"]), _name(row["agentVersion"]), "all tools" if row["tool"] is None else _name(row["tool"]),
             figure(row["sessions"]), figure(row["sessionsChanged"]), figure(row["results"]),
             figure(row["savedTokensPerLaterTurn"]), figure(row["savedTokensPerSession"]),
             figure(row["savedTokensOverLaterTurns"]), figure(row["resultsCutBefore"]), _cut(row["resultsCut"]),
             figure(row["resultsUnknown"]), _off(row))
    return cells if value is None else (_value(value), *cells)


def _value(value) -> str:
    return value if isinstance(value, str) else figure(value)


def _whatif(data: dict) -> list[Section]:
    (point,) = data["whatif"]
    blocks = [Table(_COLUMNS, tuple(_row(row) for row in point["groups"]), frozenset(range(3, 12)))]
    blocks.extend(Paragraph(note) for note in point["notes"])
    if not point["groups"]:
        blocks = [Paragraph("No replayed session has this key.")]
    return [Section(f"{data['key']} = {_value(point['value'])}", tuple(blocks))]


def _sweep(data: dict) -> list[Section]:
    rows = tuple(_row(row, point["value"]) for point in data["sweep"] for row in point["groups"] if row["tool"] is None)
    blocks = [Paragraph(f"One replay of every session per value of `{data['key']}`; each agent version's total "
                        "(`--json` has every tool).")]
    blocks.append(Table(("value", *_COLUMNS), rows, frozenset(range(4, 13))) if rows else
                  Paragraph("No replayed session has this key."))
    return [Section(f"Sweep of {data['key']}", tuple(blocks))]


def _recommend(data: dict) -> list[Section]:
    keep = data["recommend"]["keep"]
    rows = []
    for item in data["recommend"]["tools"]:
        saved = item.get("saved") or {}
        share = item.get("helpedShare")
        rows.append((_name(item["agent"]), _name(item["agentVersion"]), _name(item["tool"]), figure(item["results"]),
                     figure(item["sessions"]), figure(item["largestRawChars"]), figure(item["budget"]),
                     _name(item["key"]), figure(saved.get("savedTokensPerSession")),
                     "—" if share is None else f"{item['helpedSessions']:,} ({share:.0%})", _name(item["note"])))
    blocks = [Paragraph(f"Per agent version and tool, the smallest budget that keeps {keep:.0%} of its results whole "
                        "(those whose raw size the recordings keep), the tokens it would save per session per later "
                        "turn (negative: it costs), and the sessions it would have helped (a result of the tool "
                        "kept smaller, or kept whole where the session cut it).")]
    blocks.append(Table(("agent", "version", "tool", "results", "sessions", "largest raw", "budget", "set with",
                         "saves / session", "helped", "note"), tuple(rows), frozenset({3, 4, 5, 6, 8})))
    return [Section("Recommended budgets", tuple(blocks))]


def sections(data: dict) -> list[Section]:
    found = [_coverage(data)]
    if "recommend" in data:
        found += _recommend(data)
    elif "sweep" in data:
        found += _sweep(data)
    else:
        found += _whatif(data)
    return found


def document(data: dict, fmt: str) -> str:
    from doctor.report.documents import render_document

    return render_document(TITLE, sections(data), fmt)
