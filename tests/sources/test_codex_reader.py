"""The Codex CLI reader against real rollouts and figures derived independently of doctor.

Expected figures: the public fixtures' README ("Quick facts") and each
recording's expected.json (expected.method.txt: the output string's UTF-16
length). Our `raw_chars` is that string; doctor's `chars` adds 64 per result.
Legacy, compaction and robustness cases are built by mutating copies of the
real rollouts.
"""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.turns import TURN
from doctor.sources import codex
from doctor.sources.registry import open_session
from doctor.sources.sniffing import Head
from tests.public_fixtures import PUBLIC_FIXTURES

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(PUBLIC_FIXTURES, "codex/yoavf-codex-pomodor-timer.jsonl")
RECORDINGS = ROOT / "tests" / "recordings" / "codex"
SCENARIOS = ("big-outputs", "parallel-and-errors")


def analysed(path):
    session = open_session(Path(path))
    return session, analyze_tool_result_retention(session.history())


def raw_total(analysis):
    return sum(result.raw_chars for result in analysis.results)


def per_tool(analysis):
    return {row.tool: row.count for row in analysis.per_tool()}


def rollout(scenario):
    return next((RECORDINGS / scenario / "home" / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))


def expected(scenario):
    return json.loads((RECORDINGS / scenario / "expected.json").read_text())["files"][
        str(rollout(scenario).relative_to(RECORDINGS / scenario))]


def copy_of(scenario, tmp_path):
    target = tmp_path / rollout(scenario).name
    shutil.copyfile(rollout(scenario), target)
    return target


def records(path):
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def write_records(path, values):
    path.write_bytes(b"".join(json.dumps(value).encode() + b"\n" for value in values))


def test_fixture_figures_and_json_in_a_string_kept_as_sent():
    session, analysis = analysed(FIXTURE)
    assert session.agent == "codex"
    # README: 18 outputs (shell 3, apply_patch 11, update_plan 4), 8,770 chars, biggest shell 3,831.
    assert per_tool(analysis) == {"shell": 3, "apply_patch": 11, "update_plan": 4}
    assert raw_total(analysis) == 8_770
    largest = analysis.largest(1)[0]
    assert (largest.tool, largest.raw_chars) == ("shell", 3_831)
    outputs = [p["functionResponse"]["response"]["output"] for c in session.history() for p in c["parts"]
               if "functionResponse" in p]
    assert outputs[0].startswith('{"output":') and '"metadata":{"exit_code":0' in outputs[0]


def test_encrypted_reasoning_is_not_tool_output():
    session, analysis = analysed(FIXTURE)
    assert session.meta["encrypted_reasoning"]["count"] == 20
    assert analysis.stats.tool_result_count == 18
    assert not any("encrypted_content" in json.dumps(c) for c in session.history())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_recording_matches_independent_figures(scenario):
    want = expected(scenario)
    session, analysis = analysed(rollout(scenario))
    assert session.session_id == rollout(scenario).stem.split("-", 6)[-1]
    assert analysis.stats.tool_result_count == want["toolResults"]
    assert raw_total(analysis) == want["totalChars"]
    assert analysis.stats.total_chars == want["totalChars"] + 64 * want["toolResults"]
    assert max(r.raw_chars for r in analysis.results) == want["largestChars"]
    assert per_tool(analysis) == want["perTool"]
    assert [(r.call_id, r.tool, r.raw_chars) for r in analysis.results] == [
        (r["call_id"], r["tool"], r["chars"]) for r in want["results"]]
    assert session.meta["truncated_in_place"] == want["truncatedInPlace"]
    assert session.spill_roots == []
    side = session.side_channel["command output event"]
    assert (side.count, side.chars) == (len(want["results"]), sum(r["aggregatedOutputChars"] for r in want["results"]))


def test_parallel_calls_and_their_outputs_form_one_round():
    session, _ = analysed(rollout("parallel-and-errors"))
    contents = list(session.history())
    results = next(c for c in contents if any("functionResponse" in p for p in c["parts"]))
    assert len(results["parts"]) == 4


def legacy_form(values):
    """The pre-envelope layout: bare meta first, state lines, bare response items, no event_msg."""
    meta = next(v["payload"] for v in values if v["type"] == "session_meta")
    out = [{"id": meta["id"], "timestamp": meta["timestamp"], "instructions": None, "git": None}, {"record_type": "state"}]
    out += [v["payload"] for v in values if v["type"] == "response_item"]
    return out + [{"record_type": "state"}]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_legacy_layout_gives_the_same_figures(scenario, tmp_path):
    path = tmp_path / "rollout-legacy.jsonl"
    write_records(path, legacy_form(records(rollout(scenario))))
    session, analysis = analysed(path)
    want = expected(scenario)
    assert session.format == "codex rollout (legacy, no envelope)"
    assert (analysis.stats.tool_result_count, raw_total(analysis)) == (want["toolResults"], want["totalChars"])
    assert session.side_channel == {}


def test_compacted_replacement_history_replaces_the_history(tmp_path):
    values = records(rollout("big-outputs"))
    outputs = [i for i, v in enumerate(values) if v.get("payload", {}).get("type") == "function_call_output"]
    first_user = next(v["payload"] for v in values if v["type"] == "response_item" and v["payload"].get("role") == "user")
    compacted = {"timestamp": values[outputs[1]]["timestamp"], "type": "compacted",
                 "payload": {"message": "summary", "replacement_history": [first_user]}}
    path = tmp_path / "rollout-compacted.jsonl"
    write_records(path, values[: outputs[1] + 1] + [compacted] + values[outputs[1] + 1 :])
    session, analysis = analysed(path)
    want = expected("big-outputs")["results"]
    assert [r.call_id for r in analysis.results] == [r["call_id"] for r in want[2:]]
    dropped = session.side_channel["compacted"]
    assert (dropped.count, dropped.chars) == (2, want[0]["chars"] + want[1]["chars"])
    assert session.meta["whole_file"]["tool_results"] == 4
    assert session.meta["compaction"]["compactions"] == 1


def test_compacted_without_replacement_history_keeps_the_summary(tmp_path):
    values = records(rollout("parallel-and-errors"))
    compacted = {"timestamp": values[-1]["timestamp"], "type": "compacted", "payload": {"message": "the summary"}}
    path = tmp_path / "rollout-old-compacted.jsonl"
    write_records(path, values + [compacted])
    session, analysis = analysed(path)
    assert analysis.stats.tool_result_count == 0
    # the summary goes on in the turn in progress (the recording's one typed prompt)
    assert list(session.history()) == [{"role": "user", "parts": [{"text": "the summary"}], TURN: 1}]


def test_torn_last_line_and_invalid_middle_line(tmp_path):
    path = copy_of("parallel-and-errors", tmp_path)
    lines = path.read_bytes().split(b"\n")[:-1]
    lines[13] = b"{not json"  # line 14: a token_usage_record
    path.write_bytes(b"\n".join(lines)[:-50])
    session, analysis = analysed(path)
    assert [(i.line, i.severity) for i in session.issues] == [(14, "warning"), (len(lines), "note")]
    assert analysis.stats.tool_result_count == 6


def test_non_utf8_bytes_are_replaced_and_noted(tmp_path):
    path = copy_of("parallel-and-errors", tmp_path)
    lines = path.read_bytes().split(b"\n")
    index = next(i for i, line in enumerate(lines) if b"function_call_output" in line and b"abc abc" in line)
    lines[index] = lines[index].replace(b"abc abc", b"abc\xffabc", 1)
    path.write_bytes(b"\n".join(lines))
    session, analysis = analysed(path)
    assert [(i.line, i.severity) for i in session.issues] == [(index + 1, "note")]
    assert raw_total(analysis) == expected("parallel-and-errors")["totalChars"]


def test_output_whose_call_is_missing_gets_an_empty_name(tmp_path):
    values = records(rollout("parallel-and-errors"))
    missing = "call_612e42c3ad294abaae8cf7d5"
    path = tmp_path / "rollout-orphan.jsonl"
    write_records(path, [v for v in values if not (v.get("payload", {}).get("type") == "function_call"
                                                   and v["payload"]["call_id"] == missing)])
    session, analysis = analysed(path)
    assert next(r for r in analysis.results if r.call_id == missing).tool == ""
    (issue,) = session.issues
    assert missing in issue.message and issue.line is not None


def test_a_duplicated_output_line_is_two_items(tmp_path):
    """Rollout items carry no record id, and Codex's resume replays every line: both copies count."""
    values = records(rollout("parallel-and-errors"))
    index = next(i for i, v in enumerate(values) if v.get("payload", {}).get("type") == "function_call_output")
    path = tmp_path / "rollout-duplicate.jsonl"
    write_records(path, values[: index + 1] + [values[index]] + values[index + 1 :])
    _, analysis = analysed(path)
    assert analysis.stats.tool_result_count == 7


def test_empty_file_reads_as_an_empty_session(tmp_path):
    path = tmp_path / "rollout-empty.jsonl"
    path.write_bytes(b"")
    session = codex.read(path)
    assert list(session.history()) == [] and session.issues == []


def test_sniff():
    claude_file = next((ROOT / "tests" / "recordings" / "claude").glob("*/home/.claude/projects/*/*.jsonl"))
    assert not codex.sniff(claude_file, Head.read(claude_file))
    for path in [FIXTURE] + [rollout(s) for s in SCENARIOS]:
        assert codex.sniff(path, Head.read(path))


def test_reading_never_changes_a_file():
    files = [FIXTURE] + [rollout(s) for s in SCENARIOS]

    def digest(path):
        stat = path.stat()
        return stat.st_size, stat.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()

    before = {p: digest(p) for p in files}
    for path in files:
        session, _ = analysed(path)
        list(session.history())
    assert {p: digest(p) for p in files} == before
