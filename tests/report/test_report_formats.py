"""Text, Markdown and HTML render from every recording and public fixture, through `doctor memory`.

Each format must carry the figures of the JSON report of the same run: Qwen's
counters, every tool's retained chars, the interpretation. Report files are
written with mode 0600.
"""

from __future__ import annotations

import html
import json
import re
import stat
from pathlib import Path

import pytest
from report_support import all_sources, run_cli, source_id

from doctor.report.figures import figure

FORMATS = ("text", "markdown", "html")


def _figures(report: dict) -> list[str]:
    """Strings every human format must show for this report."""
    shown = [advice["message"].split(":")[0][:40] for advice in report["advice"]]
    retention = report.get("toolResultRetention")
    own = report.get("agentMeasure")
    if retention is not None and own is None:  # Qwen's own lines
        shown.append(f"Tool results in history: {retention['toolResultCount']}")
        shown.append(f"Total retained: {retention['totalChars']} chars")
    elif retention is not None:  # another agent's own measure, Qwen's estimator beside it
        shown.append(f"Tool results the model holds: {own['toolResultCount']}")
        shown.append(f"Sent to the model: {figure(own['sent'])} {own['unit']} (≈{figure(own['sentTokens'])} tokens")
        shown.append(f"Qwen Code's estimator, for comparing agents: {figure(retention['totalChars'])} chars")
    for tool in report["retention"].get("perTool", []):
        shown.append(figure(tool["chars"]))
        if own is not None:
            shown.append(figure(tool["sent"]))
    return shown


def _words(text: str) -> str:
    """Whitespace collapsed and code-span backticks dropped: wrapping and markup aside, the same words."""
    return " ".join(text.replace("`", "").split())


def _plain(fmt: str, text: str) -> str:
    """What a reader sees: Markdown escapes and HTML tags and entities undone."""
    if fmt == "markdown":
        text = re.sub(r"\\(.)", r"\1", text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    elif fmt == "html":
        text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return _words(text)


@pytest.mark.parametrize("path", all_sources(), ids=source_id)
def test_every_format_renders_the_figures(capsys, tmp_path: Path, path: Path) -> None:
    code, out, err = run_cli(capsys, "memory", path, "--json")
    assert code in (0, 3), err
    report = json.loads(out)
    for fmt in FORMATS:
        target = tmp_path / f"report.{fmt}"
        code, out, err = run_cli(capsys, "memory", path, "--format", fmt, "--output", target)
        assert code in (0, 3) and out == "", err
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        seen = _plain(fmt, target.read_text())
        for expected in _figures(report):
            assert _words(expected) in seen, f"{fmt}: {expected!r} missing"


def test_an_existing_report_file_is_narrowed_to_0600(capsys, tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("old")
    target.chmod(0o644)
    code, _, err = run_cli(capsys, "memory", all_sources()[0], "--format", "markdown", "-o", target)
    assert code == 0, err
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text().startswith("# doctor memory")


def test_text_sections_in_order(capsys) -> None:
    path = next(p for p in all_sources() if "oversized-alarm" in str(p))
    code, out, _ = run_cli(capsys, "memory", path, "--no-tui", "--self")
    titles = [line for line in out.split("\n") if line and not line.startswith(" ")]
    assert titles[1:] == [
        "Tool result retention",
        "By tool (chars as Qwen estimates them, tokens ≈ chars ÷ 4)",
        "Largest 3 results",
        "Copies outside the model's context",
        "Spill files",
        "Budgets in force (Qwen Code 0.24.4's rules)",
        "Process",
        "Interpretation",
    ]
    assert code == 0


def test_process_section_mirrors_qwens_core_lines(capsys) -> None:
    code, out, _ = run_cli(capsys, "memory", all_sources()[0], "--no-tui", "--self")
    assert code == 0
    section = out.split("\nProcess\n", 1)[1].split("\n\n", 1)[0].split("\n")
    keys = [line.strip().split(":", 1)[0] for line in section]
    assert keys[0] == "Memory Diagnostics (Python process)"
    for key in ("timestamp", "pid", "rss", "maxRSS", "openFileDescriptors", "smapsRollup", "gcGarbage", "risks",
                "recommendation"):
        assert key in keys
    assert re.search(r"rss: \d+\.\d (KB|MB|GB)", "\n".join(section))


def test_interpretation_names_the_tool_and_its_budget(capsys) -> None:
    """The issue's example, on a real recording: an overridden budget makes `glob` the culprit."""
    path = next(p for p in all_sources() if "oversized-alarm" in str(p))
    code, out, _ = run_cli(capsys, "memory", path, "--no-tui", "--tool-budget", "glob=10000")
    assert code == 0
    paragraph = " ".join(line.strip() for line in out.split("\nInterpretation\n", 1)[1].split("\n"))
    assert "1 result from `glob` exceeds 2× doctor's 10,000-char budget (--tool-budget glob)" in paragraph
    assert "/compress" in paragraph


@pytest.mark.parametrize("style", ["short", "hash", "full"])
def test_pointer_paths_follow_the_paths_option(capsys, style: str) -> None:
    path = next(p for p in all_sources() if "persist-gate" in str(p))
    report = json.loads(run_cli(capsys, "memory", path, "--json", "--paths", style)[1])
    pointers = [r["pointer"]["paths"][0] for r in report["retention"]["largest"] if r["pointer"]]
    spill_paths = [p["resolution"]["realPath"] for p in report["spill"]["pointers"]]
    assert pointers and spill_paths
    text = run_cli(capsys, "memory", path, "--no-tui", "--paths", style)[1]
    for shown in pointers:
        assert shown in text
    if style == "hash":
        assert all(p.startswith("sha256:") for p in pointers + spill_paths)
        assert "/tmp/" not in text and str(Path.cwd()) not in text
    elif style == "short":
        assert all("…" in p for p in pointers) and not any(str(Path.cwd()) in p for p in spill_paths)
    else:
        assert all(p.startswith("/") for p in pointers + spill_paths)


def test_markdown_tables_keep_their_columns(capsys, tmp_path: Path) -> None:
    """A tool named with a pipe, markup and HTML stays one escaped cell."""
    from report_support import hostile_session

    out = run_cli(capsys, "memory", hostile_session(tmp_path), "--format", "markdown")[1]
    assert "evil&lt;b&gt;\\[bold\\]tool\\|x" in out
    by_tool = out.split("## By tool", 1)[1].split("\n\n")[1].split("\n")
    widths = {len(re.split(r"(?<!\\)\|", row)) for row in by_tool if row.startswith("|")}
    assert len(widths) == 1, by_tool
