"""The text report's retention lines are the lines Qwen Code 0.24.4 prints, on every Qwen recording.

Qwen's text output is not stored with the recordings, its `--json` output is, so
the expected text is built here from the recorded `toolResultRetention` through
an independent transcription of `formatToolResultRetention` (chunk-KYFJLESB.js):

    "Tool result retention",
    `  Tool results in history: ${stats.toolResultCount}`,
    `  Total retained: ${stats.totalChars} chars`,
    `  Largest result: ${stats.largestResultChars} chars`,
    `  Oversized results (above tool budget): ${stats.oversizedResultCount}`,
    `  Oversized also rendered in UI history: ${stats.largeOutputsInUIHistory} item(s)`,
    `  Oversized also in compression input: ${presentInCompressionInput ? "yes (shared by reference, no extra copy)" : "no"}`
    + the /compress hint when oversizedResultCount > 0
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from report_support import qwen_runs, run_cli

from doctor.assemble import ReportOptions, report_for_session
from doctor.report.render import render
from doctor.sources.registry import open_session


def _js(value) -> str:
    """A JS template literal's number: integers bare, other doubles shortest round-trip."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def qwen_text(stats: dict) -> list[str]:
    lines = [
        "Tool result retention",
        f"  Tool results in history: {stats['toolResultCount']}",
        f"  Total retained: {_js(stats['totalChars'])} chars",
        f"  Largest result: {_js(stats['largestResultChars'])} chars",
        f"  Oversized results (above tool budget): {stats['oversizedResultCount']}",
        f"  Oversized also rendered in UI history: {stats['largeOutputsInUIHistory']} item(s)",
        "  Oversized also in compression input: "
        + ("yes (shared by reference, no extra copy)" if stats["presentInCompressionInput"] else "no"),
    ]
    if stats["oversizedResultCount"] > 0:
        lines.append("  Hint: oversized tool results stay in context and tax every later turn; "
                     "/compress can reclaim space.")
    return lines


def _interactive(name: str, run: dict) -> bool:
    return str(run.get("mode", "")).startswith(("tui", "interactive")) or ".tui." in name


def _retention_block(text: str) -> list[str]:
    """The lines right after the heading and its blank line, up to the next blank line."""
    lines = text.split("\n")
    assert lines[1] == ""
    end = lines.index("", 2)
    return lines[2:end]


@pytest.mark.parametrize("folder, name, run", qwen_runs(), ids=lambda v: v.name if isinstance(v, Path) else None)
def test_text_report_prints_qwens_lines(folder: Path, name: str, run: dict) -> None:
    session = open_session(folder / "session.jsonl")
    if not _interactive(name, run):
        session = dataclasses.replace(session, ui_history=None)  # `-p` runs see an empty UI history
    options = ReportOptions(settings=run.get("settings") or {}, use_default_settings_files=False, env=run.get("env") or {})
    text = render(report_for_session(session, options), "text")
    expected = qwen_text(json.loads((folder / name).read_text())["toolResultRetention"])
    assert _retention_block(text) == expected


def test_cli_prints_qwens_lines_for_an_interactive_run(capsys, tmp_path, monkeypatch) -> None:
    """The same block through `doctor memory --no-tui`, settings passed as Qwen would read them."""
    folder, name, run = next((f, n, r) for f, n, r in qwen_runs() if _interactive(n, r) and r.get("settings"))
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(run["settings"]))
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, err = run_cli(capsys, "memory", folder / "session.jsonl", "--no-tui", "--settings", settings)
    assert code == 0, err
    assert _retention_block(out) == qwen_text(json.loads((folder / name).read_text())["toolResultRetention"])


def test_hint_line_follows_the_alarm() -> None:
    """The transcription itself: the hint appears exactly when something is oversized."""
    base = {"toolResultCount": 1, "totalChars": 10, "largestResultChars": 10, "oversizedResultCount": 0,
            "largeOutputsInUIHistory": 0, "presentInCompressionInput": False}
    assert len(qwen_text(base)) == 7
    assert qwen_text({**base, "oversizedResultCount": 1})[-1].startswith("  Hint:")
