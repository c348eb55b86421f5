"""The Claude Code reader against real sessions and figures derived independently of doctor.

Expected figures come from the public fixtures' README ("Quick facts") and from
each recording's expected.json (a throwaway script, expected.method.txt). Both
measure a result as its content string, or its text blocks joined: that is our
`raw_chars`; doctor's `chars` adds Qwen's 64 per result. Robustness cases
mutate copies of the real recordings rather than hand-writing records.
"""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.sentinels import MICROCOMPACT_CLEARED
from doctor.sources import claude
from doctor.sources.base import UnknownFormat
from doctor.sources.registry import open_session
from doctor.sources.sniffing import Head
from tests.public_fixtures import PUBLIC_FIXTURES

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(PUBLIC_FIXTURES, "claude-code")
RECORDINGS = ROOT / "tests" / "recordings" / "claude"
SCENARIOS = ("big-outputs", "parallel-and-errors", "subagent")  # compact: a test of its own


def analysed(path):
    session = open_session(Path(path))
    return session, analyze_tool_result_retention(session.history())


def raw_total(analysis):
    return sum(result.raw_chars for result in analysis.results)


def largest_raw(analysis):
    return max((result.raw_chars for result in analysis.results), default=0)


def per_tool(analysis):
    return {row.tool: row.count for row in analysis.per_tool()}


def main_file(scenario):
    return next((RECORDINGS / scenario / "home" / ".claude" / "projects").glob("*/*.jsonl"))


def expected(scenario):
    return json.loads((RECORDINGS / scenario / "expected.json").read_text())


def copy_recording(scenario, tmp_path):
    """A copy of the scenario's project dir; returns the main file in the copy."""
    project = main_file(scenario).parent
    shutil.copytree(project, tmp_path / project.name)
    return tmp_path / project.name / main_file(scenario).name


def lines_of(path):
    return path.read_bytes().split(b"\n")[:-1]


def write_lines(path, lines):
    path.write_bytes(b"\n".join(lines) + b"\n")


# --- public fixtures: README quick facts -------------------------------------------

@pytest.mark.parametrize("name, count, raw, largest", [
    ("spotter-tool_heavy.jsonl", 6, 7_533, 3_061),
    ("spotter-8463c716-persisted-output-excerpt-L1094-1115.jsonl", 4, 4_503, 2_250),
    ("spotter-subagent-agent-aac57f5.jsonl", 12, 11_742, 1_998),
    ("spotter-short.jsonl", 2, 450, 225),
])
def test_fixture_figures(name, count, raw, largest):
    session, analysis = analysed(FIXTURES / name)
    assert session.agent == "claude"
    assert analysis.stats.tool_result_count == count
    assert raw_total(analysis) == raw
    assert analysis.stats.total_chars == raw + 64 * count
    assert largest_raw(analysis) == largest


def test_tool_heavy_biggest_is_web_search():
    _, analysis = analysed(FIXTURES / "spotter-tool_heavy.jsonl")
    assert analysis.largest(1)[0].tool == "WebSearch"


def test_persisted_stub_is_what_the_model_holds_and_tool_use_result_is_side_channel():
    session, analysis = analysed(FIXTURES / "spotter-8463c716-persisted-output-excerpt-L1094-1115.jsonl")
    stubs = session.meta["persisted_outputs"]
    assert [(s["tool_use_id"], s["tool"], s["stub_chars"]) for s in stubs] == [
        ("toolu_019CpL49DWBenUxVVCWEXz3L", "Bash", 2_250)]
    assert stubs[0]["path"].endswith("/tool-results/toolu_019CpL49DWBenUxVVCWEXz3L.txt")
    assert stubs[0]["local_path"] is None  # the spill file was not copied with the excerpt
    assert analysis.largest(1)[0].raw_chars == 2_250
    # The UI copy holds the full output (144,356 chars of stdout); README: 177,750 chars of
    # toolUseResult JSON. doctor counts the text the copies hold, without keys and punctuation.
    records = [json.loads(line) for line in (FIXTURES / "spotter-8463c716-persisted-output-excerpt-L1094-1115.jsonl").open()]
    stdout = next(r["toolUseResult"]["stdout"] for r in records if "persisted-output" in json.dumps(r.get("message")))
    copy = session.side_channel["toolUseResult"]
    assert copy.count == 4
    assert len(stdout) + 2_000 < copy.chars < 177_750
    assert session.side_channel["progress"].count == 13


def results_after_the_boundary(path):
    """Ids of the tool results written after the compact boundary: derived from the file, not by doctor."""
    records = [json.loads(line) for line in path.open()]
    boundary = next(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    return {block["tool_use_id"] for r in records[boundary:] if r.get("type") == "user"
            and isinstance(r["message"]["content"], list)
            for block in r["message"]["content"] if block.get("type") == "tool_result"}


def test_compaction_keeps_only_what_follows_the_boundary():
    path = main_file("compact")
    session, analysis = analysed(path)
    results = expected("compact")["total"]
    after = results_after_the_boundary(path)
    assert len(after) == 1  # the recording's last prompt ran one Bash call after /compact
    assert {r.call_id for r in analysis.results} == after
    assert session.meta["compaction"]["boundaries"] == 1
    assert session.meta["whole_file"]["tool_results"] == results["toolResults"] == 5
    assert session.meta["whole_file"]["raw_chars"] == results["totalChars"]
    before = [r for f in expected("compact")["files"].values() for r in f["results"] if r["tool_use_id"] not in after]
    compacted = session.side_channel["compacted"]
    assert (compacted.count, compacted.chars) == (len(before), sum(r["chars"] for r in before))
    summary = [c for c in session.history() if c["role"] == "user"][0]["parts"][0]["text"]
    assert summary.startswith("This session is being continued")


def test_inline_sidechain_is_counted_apart_from_the_main_history():
    session, analysis = analysed(FIXTURES / "ccviewer-5c0375b4-v1.0.108-inline-sidechain.jsonl")
    side = session.meta["inline_sidechain"]
    # README: 21 tool results, 22,650 chars, biggest Bash 10,041 — across both threads.
    assert analysis.stats.tool_result_count + side["tool_results"] == 21
    assert raw_total(analysis) + side["raw_chars"] == 22_650
    assert (side["largest_raw_chars"], side["per_tool"]["Bash"] > 0) == (10_041, True)
    assert "Bash" not in per_tool(analysis)
    assert session.side_channel["inline-sidechain"].count == side["tool_results"] == 8


def test_list_content_is_its_text_blocks_joined():
    session, analysis = analysed(FIXTURES / "ccviewer-5c0375b4-v1.0.108-inline-sidechain.jsonl")
    records = [json.loads(line) for line in (FIXTURES / "ccviewer-5c0375b4-v1.0.108-inline-sidechain.jsonl").open()]
    listed = {block["tool_use_id"]: "".join(item["text"] for item in block["content"] if item["type"] == "text")
              for record in records if record["type"] == "user" and isinstance(record["message"]["content"], list)
              for block in record["message"]["content"]
              if block.get("type") == "tool_result" and isinstance(block["content"], list)}
    assert len(listed) == 2
    measured = {result.call_id: result.raw_chars for result in analysis.results}
    assert {key: measured[key] for key in listed} == {key: len(text) for key, text in listed.items()}


def test_subagent_files_opened_directly_are_sessions_of_their_own():
    session, analysis = analysed(FIXTURES / "spotter-subagent-agent-acompact-946d2b.jsonl")
    assert session.format == "claude-code subagent jsonl"
    assert analysis.stats.tool_result_count == 0
    assert session.meta["agent_id"] == "acompact-946d2b"


def test_streaming_split_lines_merge_even_when_results_come_between():
    session, _ = analysed(FIXTURES / "spotter-subagent-agent-aac57f5.jsonl")
    contents = list(session.history())
    second_model = [c for c in contents if c["role"] == "model"][1]
    calls = [p for p in second_model["parts"] if "functionCall" in p]
    assert len(calls) == 6  # lines 22-24 and 29-31 share one message.id around two results
    results_after = contents[contents.index(second_model) + 1]
    assert sum("functionResponse" in p for p in results_after["parts"]) == 6


# --- real recordings (Claude Code 2.1.332) -----------------------------------------

@pytest.mark.parametrize("scenario", SCENARIOS)
def test_recording_matches_independent_figures(scenario):
    want = expected(scenario)
    path = main_file(scenario)
    file_key = str(path.relative_to(RECORDINGS / scenario))
    figures = want["files"][file_key]
    session, analysis = analysed(path)
    assert analysis.stats.tool_result_count == figures["toolResults"]
    assert raw_total(analysis) == figures["totalChars"]
    assert analysis.stats.total_chars == figures["totalChars"] + 64 * figures["toolResults"]
    assert largest_raw(analysis) == figures["largestChars"]
    assert per_tool(analysis) == figures["perTool"]
    assert sum(result.is_error for result in analysis.results) == figures["errors"]
    assert [(r.call_id, r.tool, r.raw_chars, r.is_error) for r in analysis.results] == [
        (r["tool_use_id"], r["tool"], r["chars"], r["is_error"]) for r in figures["results"]]
    assert_persisted(session.meta["persisted_outputs"], figures["persisted"])
    with_copy = [r for r in figures["results"] if r["toolUseResultChars"] is not None]
    assert session.side_channel["toolUseResult"].count == len(with_copy)
    assert session.side_channel["toolUseResult"].chars <= sum(r["toolUseResultChars"] for r in with_copy)
    assert session.spill_roots == ([path.with_suffix("") / "tool-results"] if figures["persisted"] or scenario == "subagent" else [])


def assert_persisted(ours, theirs):
    assert [(s["tool_use_id"], s["tool"], s["stub_chars"], s["path"]) for s in ours] == [
        (s["tool_use_id"], s["tool"], s["stubChars"], s["spill"]) for s in theirs]
    assert [s["local_bytes"] for s in ours] == [s["spillBytes"] for s in theirs]
    assert all(s["in_context"] for s in ours)


def test_big_outputs_tool_use_result_holds_30000_chars_of_each_spilled_output():
    session, _ = analysed(main_file("big-outputs"))
    # expected.json: 36,520 + 30,886 + 115 + 6,749 + 1,292 chars of toolUseResult JSON
    assert 2 * 30_000 < session.side_channel["toolUseResult"].chars < 75_562
    assert session.side_channel["attachment"].count == 10


def test_parallel_results_merge_into_one_user_content():
    session, _ = analysed(main_file("parallel-and-errors"))
    contents = list(session.history())
    model = next(c for c in contents if c["role"] == "model")
    assert [next(iter(p)) for p in model["parts"]] == ["text"] + ["functionCall"] * 4
    results = contents[contents.index(model) + 1]
    assert [p["functionResponse"]["name"] for p in results["parts"]] == ["Bash", "Bash", "Grep", "Read"]
    errors = [p["functionResponse"] for c in contents for p in c["parts"]
              if "functionResponse" in p and "error" in p["functionResponse"]["response"]]
    assert [fr["response"]["error"][:11] for fr in errors] == ["Exit code 3", "File does n"]


def test_subagents_are_listed_with_their_own_figures_and_kept_out_of_the_main_history():
    want = expected("subagent")
    session, analysis = analysed(main_file("subagent"))
    (row,) = session.meta["subagents"]
    agent_key = str(Path(row["path"]).relative_to(RECORDINGS / "subagent"))
    figures = want["files"][agent_key]
    assert (row["tool_results"], row["raw_chars"], row["largest_raw_chars"], row["per_tool"]) == (
        figures["toolResults"], figures["totalChars"], figures["largestChars"], figures["perTool"])
    assert_persisted(row["persisted_outputs"], figures["persisted"])
    assert (row["agentType"], row["toolUseId"]) == ("general-purpose", "toolu_ad5df4ada62c437bae7de0f2")
    assert analysis.stats.tool_result_count + row["tool_results"] == want["total"]["toolResults"]
    assert raw_total(analysis) + row["raw_chars"] == want["total"]["totalChars"]
    assert "Read" not in per_tool(analysis)


def test_subagent_file_opened_directly_spills_into_the_parent_dir():
    path = next((main_file("subagent").with_suffix("") / "subagents").glob("agent-*.jsonl"))
    session, analysis = analysed(path)
    assert session.format == "claude-code subagent jsonl"
    assert "subagents" not in session.meta
    assert analysis.stats.tool_result_count == 2
    assert session.spill_roots == [main_file("subagent").with_suffix("") / "tool-results"]
    assert session.meta["persisted_outputs"][0]["local_bytes"] == 168_894


# --- mutated copies of real recordings ----------------------------------------------

def compact_boundary_lines(session_id):
    """The boundary and summary records of a real 2.1.332 /compact, moved into another session."""
    records = [json.loads(line) for line in main_file("compact").open()]
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    summary = next(r for r in records if r.get("isCompactSummary"))
    return [json.dumps({**record, "sessionId": session_id}).encode() for record in (boundary, summary)]


def test_compact_boundary_in_a_real_session(tmp_path):
    path = copy_recording("big-outputs", tmp_path)
    lines = lines_of(path)
    after_third_result = next(i for i, line in enumerate(lines) if b"toolu_2f460c0c86a74ae085f16df6" in line
                              and b'"tool_result"' in line) + 1
    write_lines(path, lines[:after_third_result] + compact_boundary_lines("x") + lines[after_third_result:])
    session, analysis = analysed(path)
    assert per_tool(analysis) == {"Read": 2}
    assert raw_total(analysis) == 6_856 + 1_070
    assert (session.side_channel["compacted"].count, session.side_channel["compacted"].chars) == (3, 2_258 + 2_248 + 15)
    assert session.meta["whole_file"]["tool_results"] == 5
    assert [s["in_context"] for s in session.meta["persisted_outputs"]] == [False, False]


def test_microcompact_boundary_clears_results_in_the_request(tmp_path):
    path = copy_recording("big-outputs", tmp_path)
    lines = lines_of(path)
    boundary = json.loads(compact_boundary_lines("x")[0])
    boundary.update(subtype="microcompact_boundary", content="Context microcompacted",
                    microcompactMetadata={"trigger": "auto", "preTokens": 1, "tokensSaved": 1,
                                          "compactedToolIds": ["toolu_61877e679608489fafa23cea"]})
    write_lines(path, lines + [json.dumps(boundary).encode()])
    session, analysis = analysed(path)
    first = analysis.results[0]
    assert (first.call_id, first.raw_chars) == ("toolu_61877e679608489fafa23cea", len(MICROCOMPACT_CLEARED))
    assert first.sentinel == "microcompaction"
    assert (session.side_channel["microcompacted"].count, session.side_channel["microcompacted"].chars) == (1, 2_258)
    assert analysis.stats.tool_result_count == 5


def test_torn_last_line_is_a_note_and_the_rest_is_read(tmp_path):
    path = copy_recording("parallel-and-errors", tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:-200])
    session, analysis = analysed(path)
    (issue,) = session.issues
    assert (issue.severity, issue.line) == ("note", len(lines_of(main_file("parallel-and-errors"))))
    assert analysis.stats.tool_result_count == 6


def test_invalid_line_in_the_middle_is_reported_with_its_number(tmp_path):
    path = copy_recording("big-outputs", tmp_path)
    lines = lines_of(path)
    lines[19] = lines[19][: len(lines[19]) // 2]  # line 20: the first assistant record, cut in half
    write_lines(path, lines)
    session, analysis = analysed(path)
    invalid = [i for i in session.issues if i.severity == "warning" and "invalid JSON" in i.message]
    assert [i.line for i in invalid] == [20]
    assert str(invalid[0]).startswith(f"{path}:20: ")
    assert analysis.stats.tool_result_count == 5
    # Its call is gone, so the first result is nameless, and says so.
    assert analysis.results[0].tool == ""
    assert any("toolu_61877e679608489fafa23cea" in i.message and "no matching call" in i.message for i in session.issues)


def test_result_whose_tool_use_is_missing_gets_an_empty_name(tmp_path):
    path = copy_recording("parallel-and-errors", tmp_path)
    write_lines(path, [line for line in lines_of(path)
                       if not (b'"type":"assistant"' in line and b"toolu_22fb03841de74d40b7bc8d24" in line)])
    session, analysis = analysed(path)
    orphan = next(r for r in analysis.results if r.call_id == "toolu_22fb03841de74d40b7bc8d24")
    assert orphan.tool == ""
    assert per_tool(analysis) == {"Bash": 3, "Grep": 1, "Read": 1, "": 1}
    (issue,) = [i for i in session.issues if "no matching call" in i.message]
    assert issue.line is not None


def test_result_written_before_its_call_is_still_named(tmp_path):
    path = copy_recording("big-outputs", tmp_path)
    lines = lines_of(path)
    call = next(i for i, line in enumerate(lines) if b'"type":"assistant"' in line and b"toolu_35f56074" in line)
    moved = lines.pop(call)
    lines.append(moved)
    write_lines(path, lines)
    session, analysis = analysed(path)
    assert per_tool(analysis) == {"Bash": 3, "Read": 2}
    assert not [i for i in session.issues if "no matching call" in i.message]


def test_duplicate_records_are_read_once(tmp_path):
    path = copy_recording("parallel-and-errors", tmp_path)
    lines = lines_of(path)
    result = next(i for i, line in enumerate(lines) if b'"tool_result"' in line)
    write_lines(path, lines[: result + 1] + [lines[result]] + lines[result + 1 :])
    session, analysis = analysed(path)
    assert analysis.stats.tool_result_count == 6
    (issue,) = session.issues
    assert (issue.line, issue.severity) == (result + 2, "note")
    assert "duplicate record uuid" in issue.message


def test_non_utf8_bytes_are_replaced_and_noted(tmp_path):
    path = copy_recording("parallel-and-errors", tmp_path)
    lines = lines_of(path)
    index = next(i for i, line in enumerate(lines) if b'"tool_result"' in line and b"abc abc" in line)
    lines[index] = lines[index].replace(b"abc abc", b"abc\xff\xfeabc", 1)
    write_lines(path, lines)
    session, analysis = analysed(path)
    assert [(i.line, i.severity) for i in session.issues] == [(index + 1, "note")]
    result = next(r for r in analysis.results if r.call_id == "toolu_abec6579b84b42c992710028")
    assert result.raw_chars == 199 + 1  # the space became two U+FFFD, as Node's decoder does


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(UnknownFormat, match="empty"):
        open_session(path)
    session = claude.read(path)
    assert list(session.history()) == [] and session.issues == []


def test_sniff_refuses_the_other_agents():
    codex = next((ROOT / "tests" / "recordings" / "codex").glob("*/home/.codex/sessions/*/*/*/*.jsonl"))
    assert not claude.sniff(codex, Head.read(codex))
    for path in FIXTURES.glob("*.jsonl"):
        assert claude.sniff(path, Head.read(path)), path


def digest(path):
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()


def test_reading_never_changes_a_file():
    files = [p for p in list(FIXTURES.glob("*")) + list(RECORDINGS.rglob("*")) if p.is_file()]
    before = {p: digest(p) for p in files}
    for path in list(FIXTURES.glob("*.jsonl")) + [main_file(s) for s in (*SCENARIOS, "compact")]:
        session, _ = analysed(path)
        list(session.history())
    assert {p: digest(p) for p in files} == before
