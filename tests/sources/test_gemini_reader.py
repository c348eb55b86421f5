"""Gemini CLI reader against real recordings (0.61.0 JSONL) and public legacy JSON sessions."""

import json
import shutil
from pathlib import Path

import pytest

from doctor.core.analysis import analyze_tool_result_retention
from doctor.sources import gemini
from doctor.sources.base import SourceError, UnknownFormat
from doctor.sources.registry import open_session
from tests.public_fixtures import PUBLIC_FIXTURES

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings" / "gemini"
FIXTURES = Path(PUBLIC_FIXTURES, "gemini-cli")
SCENARIOS = ["big-outputs", "parallel-and-errors"]


def _chat(scenario: str) -> Path:
    return next((RECORDINGS / scenario / "home/.gemini/tmp/w/chats").glob("*.jsonl"))


def _figures(path: Path) -> dict:
    session = open_session(path)
    results = analyze_tool_result_retention(session.history(), ui_history=session.ui_history).results
    per_tool: dict[str, int] = {}
    for result in results:
        per_tool[result.tool] = per_tool.get(result.tool, 0) + 1
    return {
        "toolResults": len(results),
        "totalChars": sum(r.raw_chars for r in results),
        "largestChars": max((r.raw_chars for r in results), default=0),
        "perTool": per_tool,
        "errors": sum(r.is_error for r in results),
        "results": [{"id": r.call_id, "tool": r.tool, "chars": r.raw_chars, "error": r.is_error} for r in results],
    }


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_real_recording_matches_independent_figures(scenario):
    expected = json.loads((RECORDINGS / scenario / "expected.json").read_text())
    (name, want), = expected["files"].items()
    got = _figures(RECORDINGS / scenario / name)
    for key in ("toolResults", "totalChars", "largestChars", "perTool", "errors", "results"):
        assert got[key] == want[key], key


def test_final_state_replays_set_checkpoint_and_last_copy_wins():
    session = open_session(_chat("big-outputs"))
    want = json.loads((RECORDINGS / "big-outputs/expected.json").read_text())
    (figures,) = want["files"].values()
    assert session.meta["finalMessages"] == figures["finalMessages"]
    assert session.meta["records"] > figures["finalMessages"]  # each message is appended several times


def test_repeated_tool_call_results_are_side_channel_not_context():
    session = open_session(_chat("parallel-and-errors"))
    copies = session.side_channel[gemini.TOOL_CALL_RESULT_COPY]
    assert copies.count == 6 and copies.chars == 1279  # the same six results, not counted twice
    assert session.side_channel[gemini.UI_DISPLAY].count == 6


def test_masked_results_point_at_their_spill_files():
    session = open_session(_chat("big-outputs"))
    expected = json.loads((RECORDINGS / "big-outputs/expected.json").read_text())
    assert session.spill_roots[0] == RECORDINGS / "big-outputs/home/.gemini/tmp/w/tool-outputs"
    assert str(session.project_dir) == "/tmp/crec/gemini/big-outputs/w"  # from projects.json
    masked = [
        part["functionResponse"]["response"]["output"]
        for content in session.history() for part in content["parts"]
        if "functionResponse" in part and "<tool_output_masked>" in part["functionResponse"]["response"]["output"]
    ]
    assert len(masked) == len(expected["total"]["maskSpills"])
    for spill in expected["total"]["maskSpills"]:
        local = session.spill_roots[0] / spill.split("/tool-outputs/", 1)[1]
        assert local.is_file()


def test_legacy_fixture_counts():
    # README of the fixtures: #10 has 4 calls, biggest run_shell_command 13,599 (Python json.dumps of the response);
    # #11 has 30 calls.
    aim10 = open_session(FIXTURES / "aim-session-2026-03-18T01-56-3afe7bdc.json")
    responses = [p["functionResponse"] for c in aim10.history() for p in c["parts"] if "functionResponse" in p]
    assert len(responses) == 4
    assert max(len(json.dumps(fr["response"])) for fr in responses if fr["name"] == "run_shell_command") == 13_599
    assert aim10.format == gemini.FORMAT_LEGACY
    assert _figures(FIXTURES / "aim-control_pro_run1_final.json")["toolResults"] == 30


def test_legacy_file_diff_displays_are_side_channel():
    session = open_session(FIXTURES / "aim-control_pro_run1_final.json")
    display = session.side_channel[gemini.UI_DISPLAY]
    model_chars = sum(r.raw_chars for r in analyze_tool_result_retention(session.history()).results)
    assert display.count == 30 and display.chars > 2 * model_chars  # FileDiff objects carry whole files


def test_error_and_cancelled_results():
    pomodoro = _figures(FIXTURES / "yoavf-gemini-cli-pomodoro-timer.json")
    assert pomodoro["errors"] == 1 and pomodoro["toolResults"] == 11


def test_rewind_drops_the_message_and_everything_after(tmp_path):
    source = _chat("parallel-and-errors")
    lines = source.read_text().splitlines()
    second_round = json.loads(lines[9])["id"]  # the gemini message of the second tool round
    path = tmp_path / "session-2026-12-02T11-37-007f5c93.jsonl"
    path.write_text("\n".join(lines + [json.dumps({"$rewindTo": second_round})]) + "\n")
    assert _figures(path)["toolResults"] == 4


def test_torn_last_line_and_invalid_line_are_reported(tmp_path):
    lines = _chat("parallel-and-errors").read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:5]) + b"{not json\n" + b"".join(lines[5:]) + b'{"id": "torn", "ty')
    session = open_session(path)
    assert _figures(path)["toolResults"] == 6
    assert [(i.line, i.severity) for i in session.issues] == [(6, "warning"), (len(lines) + 2, "note")]


def test_non_utf8_bytes_do_not_stop_the_reader(tmp_path):
    data = _chat("parallel-and-errors").read_bytes().replace(b"abc abc", b"ab\xff abc", 1)
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    assert _figures(path)["toolResults"] == 6
    assert any("UTF-8" in issue.message for issue in open_session(path).issues)


def test_broken_legacy_document_names_the_file(tmp_path):
    path = tmp_path / "session-x.json"
    path.write_bytes((FIXTURES / "yoavf-gemini-cli-pomodoro-timer.json").read_bytes()[:5000])
    with pytest.raises(SourceError, match="session-x.json"):
        open_session(path)


def test_empty_file_unknown_format_and_directory(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(UnknownFormat):
        open_session(empty)
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}')
    with pytest.raises(UnknownFormat, match=r"tried: .*gemini.*dump"):
        open_session(other)
    with pytest.raises(SourceError, match="directory"):
        open_session(tmp_path)


def test_subagent_file_finds_the_project_temp_dir(tmp_path):
    chats = tmp_path / ".gemini/tmp/proj/chats/parent-id"
    chats.mkdir(parents=True)
    shutil.copy(_chat("parallel-and-errors"), chats / "child.jsonl")
    session = open_session(chats / "child.jsonl")
    assert session.spill_roots[0] == tmp_path / ".gemini/tmp/proj/tool-outputs"
