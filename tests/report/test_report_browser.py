"""The HTML report opened in a real headless browser (Debian's chromium): it renders the figures.

`--dump-dom` prints the DOM after the page has loaded and laid out, so the test sees
what the browser built from the file, not the file. The hostile session proves that
markup in tool names and previews stays text: no element comes out of it.
A screenshot is checked for being non-blank (more than background colours), decoded with zlib alone.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from browser_support import BROWSER, REQUIRED, browser, page_dom, png_pixels
from report_support import RECORDINGS, all_sources, hostile_session, run_cli

from doctor.report.figures import figure

pytestmark = pytest.mark.skipif(BROWSER is None and not REQUIRED, reason="chromium is not installed")


def _text(dom: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", dom)).split())


def _report(capsys, tmp_path: Path, session: Path, *extra: str) -> tuple[dict, Path]:
    page = tmp_path / "report.html"
    code, _, err = run_cli(capsys, "memory", session, "--format", "html", "-o", page, *extra)
    assert code == 0, err
    return json.loads(run_cli(capsys, "memory", session, "--json", *extra)[1]), page


@pytest.mark.parametrize("session", [
    RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl",
    next(p for p in all_sources() if "claude/big-outputs" in str(p)),
], ids=["qwen-oversized-alarm", "claude-big-outputs"])
def test_browser_renders_the_figures(capsys, tmp_path: Path, session: Path) -> None:
    report, page = _report(capsys, tmp_path, session)
    dom = page_dom(tmp_path, page)
    text = _text(dom)
    stats, own = report["toolResultRetention"], report.get("agentMeasure")
    if own is None:  # Qwen's own lines
        assert f"Tool results in history: {stats['toolResultCount']}" in text
        assert f"Total retained: {stats['totalChars']} chars" in text
        assert f"Oversized results (above tool budget): {stats['oversizedResultCount']}" in text
    else:  # the agent's own measure, Qwen's estimator beside it
        assert f"Tool results the model holds: {own['toolResultCount']}" in text
        assert f"Sent to the model: {figure(own['sent'])} {own['unit']}" in text
        assert f"Qwen Code's estimator, for comparing agents: {figure(stats['totalChars'])} chars" in text
    rows = re.findall(r"<tr>(.*?)</tr>", dom.split('id="by-tool', 1)[1].split("</table>", 1)[0])
    assert len(rows) == len(report["retention"]["perTool"]) + 1  # header + one row per tool
    for tool in report["retention"]["perTool"]:
        size = tool["sent"] if own is not None else tool["chars"]
        assert f"{tool['tool']} {figure(tool['count'])} {figure(size)}" in text
    assert report["advice"][0]["message"].replace("`", "")[:60] in text
    assert "<script" not in dom


def test_hostile_text_stays_text_in_thebrowser(capsys, tmp_path: Path) -> None:
    _, page = _report(capsys, tmp_path, hostile_session(tmp_path), "--include-previews")
    dom = page_dom(tmp_path, page)
    assert "<script" not in dom and "<b>" not in dom  # no element was made from tool text
    text = _text(dom)
    assert "<script>alert(1)</script>" in text and "evil<b>[bold]tool|x" in text
    assert "[masked]" in text


def test_screenshot_is_not_blank(capsys, tmp_path: Path) -> None:
    _, page = _report(capsys, tmp_path, RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl")
    shot = tmp_path / "shot.png"
    done = browser(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    rows = png_pixels(shot.read_bytes())
    colours = {pixel for row in rows[::9] for pixel in row[::7]}
    assert len(colours) > 2, "the page rendered blank"


def _page_width(tmp_path: Path, page: Path, width: int) -> tuple[int, int]:
    """(scrollWidth, clientWidth) of `page` laid out `width` px wide: measured by a frame page, as the report runs no script."""
    frame = tmp_path / "measure.html"
    frame.write_text(
        "<!doctype html><html><body style='margin:0'>"
        f"<iframe id=r src='{page.as_uri()}' style='border:0;width:{width}px;height:900px'></iframe>"
        "<pre id=out></pre><script>"
        "window.onload = () => { const d = document.getElementById('r').contentDocument.documentElement;"
        " document.getElementById('out').textContent = 'WIDTH ' + d.scrollWidth + ' ' + d.clientWidth; };"
        "</script></body></html>")
    done = browser(tmp_path, "--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom", frame.as_uri())
    found = re.search(r"WIDTH (\d+) (\d+)", done.stdout)
    assert found, done.stdout[-2000:] + done.stderr[-2000:]
    return int(found.group(1)), int(found.group(2))


def test_long_pointers_wrap_at_1280_px_and_stay_whole(capsys, tmp_path: Path) -> None:
    """The pointer column of "Largest results" wraps instead of scrolling the page sideways."""
    report, page = _report(capsys, tmp_path, RECORDINGS / "qwen" / "persist-gate" / "session.jsonl", "--paths", "full")
    pointers = [path for row in report["retention"]["largest"] if row["pointer"] for path in row["pointer"]["paths"]]
    assert pointers and min(len(p) for p in pointers) > 120  # one unbroken 64-char hash in each
    scroll, client = _page_width(tmp_path, page, 1280)
    assert scroll <= client, f"the page scrolls sideways: {scroll} px of content in {client} px"
    text = _text(page_dom(tmp_path, page))
    assert all(pointer in text for pointer in pointers)  # whole in the DOM: selectable and copyable
