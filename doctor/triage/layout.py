"""`doctor scan`'s answers laid out as report sections (text, Markdown, HTML share them).

Built from the JSON-ready dict of `answers.collect`, so every format shows the same
figures as `--json`. Names from sessions (tools, versions, paths) are made inert here.
"""

from __future__ import annotations

from doctor.report.charts import Chart
from doctor.report.figures import figure
from doctor.report.inert import inert_line
from doctor.report.sections import Paragraph, Section, Table

TITLE = "doctor scan — triage database"


def _table(columns: tuple[str, ...], rows, numeric: tuple[int, ...]) -> Table:
    return Table(columns, tuple(tuple(cell if isinstance(cell, str) else figure(cell) for cell in row) for row in rows),
                 frozenset(numeric))


NAME_CHARS = 60  # a tool name can be anything a model or server sent: cells stay readable


def _name(value) -> str:
    if value in (None, ""):
        return "—"
    text = inert_line(value)
    return text if len(text) <= NAME_CHARS else text[:NAME_CHARS - 1] + "…"


def _not_sessions(count: int) -> str:
    if not count:
        return ""
    return (f"; {count:,} file{' is' if count == 1 else 's are'} in the folders scanned but not "
            f"{'a session' if count == 1 else 'sessions'} (--skipped names them)")


def _scan(data: dict) -> Section:
    scan, totals = data["scan"], data["totals"]
    blocks = []
    if data.get("filters"):
        blocks.append(Paragraph("Only sessions " + inert_line("; ".join(data["filters"])) + " (every figure below)."))
    if scan is not None:
        members = f" and {_count(scan['members'], 'archive member')} read from them" if scan["members"] else ""
        gone = f", {scan['gone']:,} gone" if scan["gone"] else ""
        replayed = f", {scan['replayed']:,} read again for their replay inputs" if scan.get("replayed") else ""
        blocks.append(Paragraph(
            f"This scan: {_count(scan['seen'], 'file')} seen{members}; {scan['new']:,} new, {scan['changed']:,} "
            f"changed, {scan['grown']:,} grown, {scan['unchanged']:,} unchanged{replayed}, {scan['skipped']:,} skipped{gone}"
            + (f", {scan['notSessions']:,} not sessions" if scan.get("notSessions") else "")
            + f"; {scan['resultsWritten']:,} result rows written."))
    blocks.append(Paragraph(
        f"Database: {totals['sessions']:,} sessions ({totals['from_reports']:,} from pasted reports), "
        f"{totals['results']:,} tool results, {figure(totals['injected_chars'])} chars "
        f"(~{totals['tokens']:,} tokens) injected, {totals['oversized']:,} oversized; "
        f"{totals['files_skipped']:,} files skipped" + _not_sessions(totals.get("files_not_sessions", 0)) + "."
        + _counting(totals)))
    if totals["agents"]:
        blocks.append(_table(("Agent", "Version", "Sessions"),
                             ((_name(a["agent"]), _name(a["agent_version"]), a["sessions"]) for a in totals["agents"]),
                             (2,)))
    return Section("Scan", tuple(blocks))


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _counting(totals: dict) -> str:
    """What the session count leaves out or cannot break down, said only when there is any."""
    notes = []
    if totals["extra_copies"]:
        notes.append(f"{totals['extra_copies']:,} more cop{'ies' if totals['extra_copies'] != 1 else 'y'} of these "
                     "sessions (the same session in another file or a pasted report) counted once")
    if totals["without_result_rows"]:
        notes.append(f"{totals['without_result_rows']:,} session{'s' if totals['without_result_rows'] != 1 else ''} "
                     "without per-result rows (reports pasted without --results): in the session counts, not in "
                     "the per-tool figures")
    if totals["files_gone"]:
        notes.append(f"{totals['files_gone']:,} file{'s' if totals['files_gone'] != 1 else ''} gone since scanned, "
                     "left out (--prune deletes them)")
    return "".join(f" {note[0].upper()}{note[1:]}." for note in notes)


def _skipped(data: dict) -> Section | None:
    skipped, files = data["totals"]["skipped"], data["skippedFiles"]
    if not skipped and not files:
        return None
    blocks = []
    if skipped:
        blocks += [Paragraph("Files that could not be read as sessions or reports (from every scan), by reason:"),
                   _table(("Reason", "Files"), ((inert_line(row["reason"]), row["files"]) for row in skipped), (1,))]
    if files:
        shown = sum(1 for row in files if row["status"] == "skipped")
        more = data["totals"]["files_skipped"] - shown
        blocks += [Paragraph("By name, newest scan first" + (f" ({more:,} more: --skipped lists every one)"
                                                              if more > 0 else "") + ":"),
                   _table(("File", "Kind", "Reason", "Scan"),
                          ((inert_line(row["path"]), "not a session" if row["status"] == "not-session" else "skipped",
                            inert_line(row["reason"] or ""), row["scan_id"]) for row in files), (3,))]
    return Section("Skipped files", tuple(blocks))


def _tools(data: dict) -> Section:
    rows = ((_name(t["tool"]), t["tool_type"], t["results"], t["chars"], t["chars_p50"], t["chars_p90"],
             t["chars_p99"], t["chars_max"], t["tokens"], t["tokens_p90"], t["oversized"]) for t in data["tools"])
    charts = tuple(
        Chart(f"{_name(h['tool'])}: results by injected size", tuple(b["upTo"] for b in h["bins"]),
              tuple(b["results"] for b in h["bins"]), "injected chars (log scale: bins up to 1, 3, 10, 30 …)",
              "results",
              slug=f"histogram-{index}")
        for index, h in enumerate(data["charts"]["histograms"]))
    return Section("Tools by injected context", (_table(
        ("Tool", "Type", "Results", "Chars", "p50", "p90", "p99", "Max", "Tokens", "Tokens p90", "Oversized"),
        rows, tuple(range(2, 11))), *charts))


def _oversized(data: dict) -> Section:
    rows = ((_name(r["tool"]), _name(r["agent"]), _name(r["agent_version"]), r["results"], r["oversized"],
             f"{r['per_1000']:.1f}") for r in data["oversizedByVersion"])
    versions = data["charts"]["oversizedRateByVersion"]
    chart = Chart("Oversized per 1,000 results, by agent version",
                  tuple(f"{_name(v['agent'])} {v['agent_version']}".strip() for v in versions),
                  tuple(v["per_1000"] for v in versions), "agent and version", "oversized per 1,000",
                  slug="oversized-by-version")
    return Section("Oversized per 1,000 results, by tool and agent version", (_table(
        ("Tool", "Agent", "Version", "Results", "Oversized", "Per 1,000"), rows, (3, 4, 5)), chart))


def _layers(data: dict) -> Section:
    rows = ((_name(r["agent"]), r["layer"], r["results"], f"{r['percent']:.2f}%", r["injected_chars"],
             r["declared_chars"], r["declared_kb"]) for r in data["layers"])
    return Section("Which layer bounded each result", (
        Paragraph("Per agent: the share of results each layer bounded (`none`: the full output stayed in "
                  "context), what they cost in context, and the full sizes their spill stubs declare, in the "
                  "unit each states (Claude and Gemini: characters; Qwen: KB)."),
        _table(("Agent", "Layer", "Results", "Share", "Injected chars", "Declared chars", "Declared KB"), rows,
               (2, 3, 4, 5, 6)),
    ))


def _raw(data: dict) -> Section:
    rows = ((_name(r["tool"]), r["results"], r["raw_chars"], r["injected_chars"],
             "—" if r["injected_per_raw"] is None else f"{r['injected_per_raw']:.3f}", r["bounded_with_size"],
             r["declared_chars"], r["declared_kb"]) for r in data["rawVsInjected"])
    return Section("Raw vs injected", (
        Paragraph("Raw: the output strings the history keeps; injected: what the model is charged for them "
                  "(wrappers and nested parts included); declared: the full outputs' sizes where a layer cut "
                  "them and said so."),
        _table(("Tool", "Results", "Raw chars", "Injected chars", "Injected/raw", "Bounded, sized", "Declared chars",
                "Declared KB"), rows, (1, 2, 3, 4, 5, 6, 7)),
    ))


def _growth(data: dict) -> Section | None:
    turns = data["charts"]["growthPerTurn"]
    if not turns:
        return None
    chart = Chart("Injected chars each turn added, per session that reached it", tuple(str(t["turn"]) for t in turns),
                  tuple(t["chars_per_session_reached"] for t in turns), "turn (prompts typed)", "chars",
                  slug="growth-per-turn")
    unknown = data["charts"]["growthSessionsUnknown"]
    note = ("A turn is the n-th prompt the person typed (0: results before the first); a session reached a "
            "turn when it had that many prompts.")
    if unknown:
        note += (f" {unknown:,} session{'s' if unknown != 1 else ''} from pasted reports, which do not say how many "
                 "prompts they had, are left out.")
    return Section("Growth per turn", (
        Paragraph(note), chart,
        _table(("Turn", "Sessions that reached it", "With results in it", "Chars added",
                "Chars per session that reached it"),
               ((str(t["turn"]), t["sessions_reached"], t["sessions_with_results"], t["chars"],
                 t["chars_per_session_reached"]) for t in turns), (1, 2, 3, 4))))


def _risk(data: dict) -> Section:
    """Paths and reasons whole (a path is how the session is found; --paths full stores the whole of it)."""
    rows = ((_name(s["session_id"]), inert_line(s["path"]), _name(s["agent"]), _name(s["agent_version"]),
             s["tool_results"], s["retained_tokens"], _window(s), s["oversized"], inert_line(s["reason"]))
            for s in data["sessionsAtRisk"])
    return Section("Sessions by risk", (
        Paragraph("Window: the share of the model's context window the tool results hold, where the session "
                  "states the window (a Codex rollout does); — where it does not."),
        _table(("Session", "Path", "Agent", "Version", "Results", "Tokens", "Window", "Oversized", "Why"), rows,
               (4, 5, 6, 7))))


def _window(session: dict) -> str:
    from doctor.report.window import percent

    if session["context_window_share"] is None:
        return "—"
    return f"{percent(session['context_window_share'])} of {figure(session['context_window_tokens'])}"


def _compare(data: dict) -> Section | None:
    compared = data.get("compare")
    if compared is None:
        return None
    a, b = compared["a"], compared["b"]
    title = f"Compare {inert_line(compared['field'])}: {_name(a['value'])} vs {_name(b['value'])}"
    if compared["unmatched"]:
        missing = " and ".join(f"{inert_line(compared['field'])}={_name(value)}" for value in compared["unmatched"])
        known = ", ".join(_name(value) for value in compared["values"]) or "none"
        return Section(title, (Paragraph(f"{missing} matches no session in the database, so there is nothing to "
                                         f"compare. Values it has: {known}."),))

    def line(label: str, key: str) -> tuple:
        return (label, figure(a[key]), figure(b[key]))

    summary = _table((inert_line(compared["field"]), _name(a["value"]), _name(b["value"])), (
        line("Sessions", "sessions"), line("Tool results", "results"), line("Oversized", "oversized"),
        line("Oversized per 1,000", "per_1000"), line("Injected chars p50", "chars_p50"),
        line("Injected chars p90", "chars_p90"), line("Injected chars p99", "chars_p99"),
        line("Injected chars max", "chars_max"), line("Tokens per session", "tokens_per_session"),
        *((f"Layer: {layer}", f"{a['layer_percent'].get(layer, 0):.2f}%", f"{b['layer_percent'].get(layer, 0):.2f}%")
          for layer in sorted(set(a["layer_percent"]) | set(b["layer_percent"]))),
    ), (1, 2))

    def cell(side: dict | None, key: str) -> str:
        return "—" if side is None else figure(side[key])

    tools = _table(("Tool", f"Results {_name(a['value'])}", f"Results {_name(b['value'])}", "Per 1,000 A",
                    "Per 1,000 B", "p90 A", "p90 B", "What changed"),
                   ((_name(t["tool"]), cell(t["a"], "results"), cell(t["b"], "results"), cell(t["a"], "per_1000"),
                     cell(t["b"], "per_1000"), cell(t["a"], "chars_p90"), cell(t["b"], "chars_p90"), t["change"])
                    for t in compared["tools"]), (1, 2, 3, 4, 5, 6))
    return Section(title, (summary, Paragraph("Per tool, the largest changes first (A is the first value):"), tools))


def sections(data: dict) -> list[Section]:
    built = [_scan(data), _compare(data), _skipped(data), _tools(data), _oversized(data), _layers(data), _raw(data),
             _growth(data), _risk(data)]
    return [section for section in built if section is not None]


def document(data: dict, fmt: str) -> str:
    from doctor.report.documents import render_document

    return render_document(TITLE, sections(data), fmt)
