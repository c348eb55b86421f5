"""A 200 MB single line (one tool output kept whole) reads and measures exactly."""

import json
from pathlib import Path

from doctor.cli import main
from doctor.core.analysis import analyze_tool_result_retention
from doctor.sources.registry import open_session

RECORDING = Path(__file__).parents[1] / "recordings" / "qwen" / "oversized-alarm"
HUGE = 200 * 1024 * 1024
MARKER = "o" * 90000  # the shell output of this recording: print('o' * 90000)


def _write_with_huge_output(source: Path, target: Path) -> None:
    """Copy the recording, growing the first 90,000-char shell output to 200 MB, streamed to disk."""
    grown = False
    with open(source, encoding="utf-8") as lines, open(target, "w", encoding="utf-8") as out:
        for line in lines:
            if not grown and '"tool_result"' in line and MARKER in line:
                before, _, after = line.partition(MARKER)
                out.write(before)
                for _ in range(HUGE // (1 << 20)):
                    out.write("o" * (1 << 20))
                out.write(after)
                grown = True
            else:
                out.write(line)
    assert grown


def test_a_200_mb_line_is_read_and_measured(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "no-qwen-home"))
    expected = json.loads((RECORDING / "expected.json").read_text())["toolResultRetention"]
    huge = tmp_path / "session.jsonl"
    _write_with_huge_output(RECORDING / "session.jsonl", huge)
    assert huge.stat().st_size > HUGE

    stats = analyze_tool_result_retention(open_session(huge).history()).stats
    growth = HUGE - len(MARKER)
    assert stats.tool_result_count == expected["toolResultCount"]
    assert stats.total_chars == expected["totalChars"] + growth
    assert stats.oversized_result_count == expected["oversizedResultCount"]

    assert main(["memory", str(huge), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["toolResultRetention"]["largestResultChars"] == expected["largestResultChars"] + growth
