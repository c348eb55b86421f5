"""A tool name is the model's (or an MCP server's) text: in `doctor scan --openmetrics` it becomes a label
value, which people `cat`, scrape into dashboards and paste into tickets. Escape sequences, BEL, C1 and bidi
controls in it must reach none of them (the red-team run found an OSC 52 clipboard write in the file).
Through the CLI, on a real Qwen recording whose tool was renamed as a hostile model would name it."""

from __future__ import annotations

from pathlib import Path

from tests.security.writes_support import run_doctor

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "qwen" / "errors" / "session.jsonl"
HOSTILE = "run_\\u001b]52;c;cHduZWQ=\\u0007shell\\u009b31m\\u202ecommand"  # as JSON escapes in the file


def test_a_hostile_tool_name_is_inert_in_the_openmetrics_file(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    session = tmp_path / "corpus" / "session.jsonl"
    session.parent.mkdir()
    text = RECORDING.read_text()
    assert '"run_shell_command"' in text
    session.write_text(text.replace('"run_shell_command"', f'"{HOSTILE}"'))
    metrics = tmp_path / "doctor.prom"
    done = run_doctor(home, "scan", "--db", str(tmp_path / "triage.duckdb"), str(session.parent),
                      "--openmetrics", str(metrics), timeout=120)
    assert done.returncode == 0, done.stderr
    written = metrics.read_text()
    for control in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert control not in written, repr(control)
    # the series is there under the name made inert: the OSC sequence dropped, the other controls shown
    # as escapes (whose backslashes the label format doubles)
    assert 'tool="run_shell\\\\x9b31m\\\\u202ecommand"' in written
