"""The scan's HTML charts in a real headless browser: drawn (bars of the right heights), labelled, not blank.

Histogram bins are recomputed here from `doctor memory --json --results` of the same sessions
with the chart module's own binning, so the SQL and the drawing are both checked against them.
"""

from __future__ import annotations

import bisect
import html
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from browser_support import BROWSER, REQUIRED, browser, page_dom, png_pixels
from triage_support import run_cli

from doctor.report.charts import BAR
from doctor.triage.bins import BOUNDS, bin_label

pytestmark = pytest.mark.skipif(BROWSER is None and not REQUIRED, reason="chromium is not installed")


def _page(capsys, tmp_path: Path, db: Path) -> tuple[dict, Path]:
    page = tmp_path / "scan.html"
    code, _, err = run_cli(capsys, "scan", "--db", db, "--format", "html", "-o", page)
    assert code == 0, err
    code, out, _ = run_cli(capsys, "scan", "--db", db, "--json")
    return json.loads(out), page


def _svg(dom: str, slug: str) -> str:
    match = re.search(rf'<svg[^>]*id="{re.escape(slug)}".*?</svg>', dom, re.S)
    assert match, f"no chart {slug} in the page"
    return match.group(0)


def _bars(svg: str) -> list[tuple[float, str]]:
    """(height, tooltip) of each bar, in drawing order."""
    return [(float(height), html.unescape(title)) for height, title in
            re.findall(r'<rect class="bar"[^>]*height="([0-9.]+)"[^>]*><title>(.*?)</title>', svg)]


def test_histograms_and_version_chart_are_drawn_and_labelled(capsys, tmp_path: Path, corpus) -> None:
    db, reports = corpus
    answers, page = _page(capsys, tmp_path, db)
    dom = page_dom(tmp_path, page)
    assert "<script" not in dom.lower()
    bins = defaultdict(Counter)
    for report in reports:
        for result in report["retention"]["results"]:
            bins[result["tool"]][bisect.bisect_left(BOUNDS, result["chars"])] += 1  # (edge, next edge]
    histograms = answers["charts"]["histograms"]
    assert len(histograms) == 6
    for index, histogram in enumerate(histograms):
        counts = bins[histogram["tool"]]
        span = range(min(counts), max(counts) + 1)
        assert [(b["bin"], b["results"]) for b in histogram["bins"]] == [(k, counts.get(k, 0)) for k in span]
        svg = _svg(dom, f"histogram-{index}")
        bars = _bars(svg)
        assert [title for _, title in bars] == [f"{bin_label(k)}: {counts.get(k, 0):,}" for k in span]
        tallest = max(counts.values())
        for (height, _), k in zip(bars, span):
            assert height == pytest.approx(max(h for h, _ in bars) * counts.get(k, 0) / tallest, abs=0.15)
        assert "injected chars (log scale" in svg and "results" in svg
        assert html.escape(histogram["tool"][:20]) in svg
    versions = answers["charts"]["oversizedRateByVersion"]
    svg = _svg(dom, "oversized-by-version")
    labels = [html.unescape(t) for t in re.findall(r'<text class="label"[^>]*>(.*?)</text>', svg)]
    assert labels == [f"{v['agent']} {v['agent_version']}".strip() for v in versions]
    assert any(height > 0 for height, _ in _bars(svg)), "some version has oversized results"
    assert _svg(dom, "growth-per-turn")


def test_charts_show_on_the_screenshot(capsys, tmp_path: Path, corpus) -> None:
    db, _ = corpus
    _, page = _page(capsys, tmp_path, db)
    shot = tmp_path / "shot.png"
    done = browser(tmp_path, f"--screenshot={shot}", "--window-size=1200,2400", page.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    rows = png_pixels(shot.read_bytes())
    bar = bytes.fromhex(BAR[1:])
    painted = sum(1 for row in rows[::3] for pixel in row[::3] if pixel == bar)
    assert painted > 500, "the bars were not painted"


def test_text_and_markdown_keep_the_figures_without_the_drawing(capsys, corpus) -> None:
    db, _ = corpus
    for fmt in ("text", "markdown"):
        code, out, _ = run_cli(capsys, "scan", "--db", db, "--format", fmt)
        assert code == 0 and "<svg" not in out and "Growth per turn" in out


def _layout(tmp_path: Path, page: Path, width: int) -> dict:
    """What overflows when `page` is laid out `width` px wide, measured in chromium by a frame page (the
    report itself runs no script): the page's own sideways scroll, charts past the edge, tables that are
    neither inside the page nor scrollable in their box."""
    frame = tmp_path / f"measure-{width}.html"
    frame.write_text(
        "<!doctype html><html><body style='margin:0'>"
        f"<iframe id=r src='{page.as_uri()}' style='border:0;width:{width}px;height:900px'></iframe>"
        "<pre id=out></pre><script>"
        "window.onload = () => { const doc = document.getElementById('r').contentDocument;"
        " const d = doc.documentElement, edge = d.clientWidth;"
        " const charts = [...doc.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect());"
        " const boxes = [...doc.querySelectorAll('div.table')];"
        " const out = {scroll: d.scrollWidth, client: edge, charts: charts.length,"
        "  chartsOut: charts.filter(r => r.right > edge + 0.5 || r.width < 100).length,"
        "  chartWidths: charts.map(r => Math.round(r.width)), tables: boxes.length,"
        "  tablesCut: boxes.filter(b => b.getBoundingClientRect().right > edge + 0.5 || (b.scrollWidth > b.clientWidth"
        "   && getComputedStyle(b).overflowX !== 'auto')).length,"
        "  tablesScrolling: boxes.filter(b => b.scrollWidth > b.clientWidth).length};"
        " document.getElementById('out').textContent = 'LAYOUT ' + JSON.stringify(out); };"
        "</script></body></html>")
    done = browser(tmp_path, "--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom", frame.as_uri())
    found = re.search(r"LAYOUT (\{.*?\})", html.unescape(done.stdout))
    assert found, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(found.group(1))


@pytest.mark.skipif(BROWSER is None and not REQUIRED, reason="chromium is not installed")
def test_the_page_fits_a_phone_and_a_laptop(capsys, tmp_path: Path) -> None:
    """At 390 and 1280 px: charts scale to the column (viewBox), nothing runs past the page's edge, a table
    wider than a phone scrolls in its own box, and paths and reasons are whole (--paths full)."""
    from triage_support import RECORDINGS

    db = tmp_path / "full.duckdb"
    assert run_cli(capsys, "scan", "--db", db, "--jobs", "1", "--paths", "full", RECORDINGS / "codex",
                   RECORDINGS / "qwen", "-o", tmp_path / "a.txt")[0] == 0
    page = tmp_path / "answers.html"
    assert run_cli(capsys, "scan", "--db", db, "--format", "html", "-o", page)[0] == 0
    code, out, _ = run_cli(capsys, "scan", "--db", db, "--json")
    risk = json.loads(out)["sessionsAtRisk"]
    text = html.unescape(page.read_text())
    assert all(row["path"] in text and row["reason"] in text for row in risk)
    assert max(len(row["path"]) for row in risk) > 60  # long enough that the old 60-char cut would have shown
    for width in (390, 1280):
        layout = _layout(tmp_path, page, width)
        assert layout["scroll"] <= layout["client"], (width, layout)
        assert layout["charts"] >= 3 and layout["chartsOut"] == 0 and layout["tablesCut"] == 0, (width, layout)
        assert max(layout["chartWidths"]) <= layout["client"]
        shot = tmp_path / f"shot-{width}.png"
        done = browser(tmp_path, f"--screenshot={shot}", f"--window-size={width},2400", page.as_uri())
        assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
        rows = png_pixels(shot.read_bytes())
        bar = bytes.fromhex(BAR[1:])
        assert sum(1 for row in rows for pixel in row if pixel == bar) > 200, f"no bars painted at {width} px"
    assert _layout(tmp_path, page, 390)["tablesScrolling"] > 0  # the wide tables scroll in their boxes at 390
