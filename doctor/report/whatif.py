"""`doctor whatif` as text, Markdown and HTML: the same sections, laid out once (doctor.report.sections' blocks).

Figures come from the replay (doctor.whatif.result.WhatIf); names, call ids and reasons come from the
session and are made inert. Sizes are what the model got (JavaScript string length); "saved" is in
Qwen's measure of retained context, the one `toolResultRetention.totalChars` uses.
"""

from __future__ import annotations

from doctor.report.charts import Chart
from doctor.report.figures import figure, plural
from doctor.report.inert import inert_line
from doctor.report.paths import present_path
from doctor.report.sections import Paragraph, Section, Table, Verbatim

CHANGED_SHOWN = 30


def _settings_line(whatif) -> str:
    changed = []
    for key, value in whatif.overrides.items():
        before = whatif.base.values.get(key)
        was = "not set" if before is None else figure(before)
        now = "not set (default)" if value is None else figure(value)
        changed.append(f"`{key}` {was} → {now}")
    return "Replayed with " + ("; ".join(changed) if changed else "the session's own settings") + "."


def heading(whatif) -> str:
    source = whatif.before.source
    where = present_path(source.path, whatif.before.path_style) if source.path else "live history"
    return inert_line(f"doctor whatif — {whatif.client} {whatif.version} — {where}"
                      + (f" (session {source.session_id})" if source.session_id else ""))


def _figures(whatif) -> Section:
    before, after = whatif.before.qwen_stats, whatif.after.qwen_stats
    rows = []
    if before is not None and after is not None:
        for label, a, b in (("Tool results in history", before.tool_result_count, after.tool_result_count),
                            ("Total retained chars", before.total_chars, after.total_chars),
                            ("Largest result chars", before.largest_result_chars, after.largest_result_chars),
                            ("Oversized results", before.oversized_result_count, after.oversized_result_count),
                            ("Oversized threshold", before.oversized_threshold_chars, after.oversized_threshold_chars)):
            rows.append((label, figure(a), figure(b), _signed(b - a)))
    return Section("Before and after", (Paragraph(_settings_line(whatif)),
                                        Table(("figure", "before", "after", "change"), tuple(rows), frozenset({1, 2, 3}))))


def _signed(value: float) -> str:
    return "0" if value == 0 else ("+" if value > 0 else "−") + figure(abs(value))


def _saved(whatif) -> Section:
    saved = whatif.saved()
    chars = saved["chars"]
    verb = "saves" if chars >= 0 else "costs"
    lines = [Paragraph(f"The replayed settings {verb} {figure(abs(chars))} chars (~{figure(abs(saved['tokensPerLaterTurn']))} "
                       f"tokens) in every later turn, and {figure(abs(saved['charsOverLaterTurns']))} chars "
                       f"(~{figure(abs(saved['tokensOverLaterTurns']))} tokens) summed over the turns that followed each "
                       "result (each model request re-sends every earlier result)."),
             Paragraph(f"Results cut by a layer: {figure(saved['resultsCutBefore'])} before, {figure(saved['resultsCut'])} after.")]
    if saved["exact"]:
        lines.append(Paragraph("Every result's raw output was found: these figures are exact."))
    else:
        off = saved["couldBeOffBy"]["chars"]
        bound = "an unknown amount (no limit bounds them)" if off is None else f"at most {figure(off)} chars"
        lines.append(Paragraph(f"{plural(saved['resultsUnknown'], 'result')} unknown (the recording does not keep "
                               f"enough of the output): they are counted at their recorded size, so the totals are "
                               f"a bound, off by {bound}."))
    return Section("Saved", tuple(lines))


def _changes(whatif) -> Section | None:
    rows = []
    changes = [c for c in whatif.changes() if not c["known"] or c["afterChars"] != c["beforeChars"]]
    changes.sort(key=lambda c: (c["known"], -abs(c["beforeChars"] - c["afterChars"]), c["ordinal"]))
    for change in changes[:CHANGED_SHOWN]:
        after = figure(change["afterChars"]) if change["known"] else "unknown"
        rows.append((str(change["ordinal"]), inert_line(change["tool"]), inert_line(change["callId"] or ""),
                     figure(change["beforeChars"]), after, inert_line(change["afterLayer"]),
                     inert_line(change.get("why") or "")))
    if not rows:
        return Section("Results that change", (Paragraph("No result changes under these settings."),))
    blocks = [Table(("#", "tool", "call id", "before", "after", "layer after", "why unknown"), tuple(rows),
                    frozenset({0, 3, 4}))]
    if len(changes) > CHANGED_SHOWN:
        blocks.append(Paragraph(f"… and {len(changes) - CHANGED_SHOWN} more (`--json` lists every result)."))
    return Section("Results that change", tuple(blocks))


def whatif_sections(whatif) -> list[Section]:
    return [_figures(whatif), _saved(whatif), _changes(whatif)]


def sweep_sections(sweep) -> list[Section]:
    """One row per value of the swept key, and the two charts (context saved, results cut)."""
    rows = []
    for value, whatif in sweep.points:
        saved = whatif.saved()
        rows.append(("not set" if value is None else figure(value), figure(saved["chars"]),
                     figure(saved["tokensPerLaterTurn"]), figure(saved["tokensOverLaterTurns"]),
                     figure(saved["resultsCut"]), figure(saved["resultsUnknown"]),
                     "exact" if saved["exact"] else ("±∞" if saved["couldBeOffBy"]["chars"] is None
                                                     else "±" + figure(saved["couldBeOffBy"]["chars"]))))
    labels = tuple(row[0] for row in rows)
    table = Table((sweep.key, "chars saved / turn", "tokens / turn", "tokens over session", "results cut", "unknown",
                   "bound"), tuple(rows), frozenset({1, 2, 3, 4, 5}))
    saved_chart = Chart(f"Context saved per later turn by {sweep.key}", labels,
                        tuple(max(0.0, float(w.saved()["chars"])) for _, w in sweep.points), sweep.key, "chars saved",
                        "whatif-saved")
    cut_chart = Chart(f"Results cut by {sweep.key}", labels, tuple(float(w.saved()["resultsCut"]) for _, w in sweep.points),
                      sweep.key, "results cut", "whatif-cut")
    intro = Paragraph(f"One replay per value of `{sweep.key}` (the session's own: "
                      f"{'not set' if sweep.base_value is None else figure(sweep.base_value)}); every other setting as the "
                      "session had it. Negative savings cost context.")
    return [Section(f"Sweep of {sweep.key}", (intro, table, saved_chart, cut_chart)), *_sweep_ascii(sweep, rows)]


def _sweep_ascii(sweep, rows) -> list[Section]:
    """The two charts as text bars, for the text and Markdown reports (HTML draws the SVG ones)."""
    width = 40
    blocks = []
    for title, column in (("context saved per later turn (chars)", 1), ("results cut", 4)):
        values = [float(row[column].replace(",", "").replace("−", "-")) for row in rows]
        top = max((abs(v) for v in values), default=0) or 1
        lines = tuple(f"{row[0]:>12} {'█' * round(width * max(v, 0) / top):<{width}} {row[column]}"
                      for row, v in zip(rows, values))
        blocks.append(Verbatim(lines, caption=title))
    return [Section("Charts", tuple(blocks))]


def recommend_sections(recommendation) -> list[Section]:
    rows = []
    for item in recommendation.items:
        rows.append((inert_line(item.tool), figure(item.results), figure(item.largest),
                     "—" if item.budget is None else figure(item.budget), item.key,
                     "—" if item.saved is None else figure(item.saved), inert_line(item.note)))
    intro = Paragraph(f"For each tool, the smallest budget that keeps {recommendation.keep:.0%} of its results whole "
                      f"(raw output known for them), and the context it would save per later turn in this session.")
    return [Section("Recommended budgets", (intro, Table(("tool", "results", "largest raw", "budget", "set with", "saves",
                                                          "note"), tuple(rows), frozenset({1, 2, 3, 5}))))]


def document(answer) -> tuple[str, list[Section]]:
    """(heading, sections) of a replay, a sweep or a recommendation."""
    kind = type(answer).__name__
    if kind == "Sweep":
        return heading(answer.points[0][1]), sweep_sections(answer)
    if kind == "Recommendation":
        return heading(answer.whatif), recommend_sections(answer)
    return heading(answer), whatif_sections(answer)
