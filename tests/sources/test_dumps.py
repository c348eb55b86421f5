"""Message dumps built from request bodies real clients sent (see tests/recordings/dumps/make_dumps.py)."""

import json
from pathlib import Path

import pytest

from doctor.core.analysis import analyze_tool_result_retention
from doctor.sources import autobot, dumps
from doctor.sources.base import SourceError, UnknownFormat
from doctor.sources.registry import open_session
from doctor.sources.sniffing import Head
from tests.public_fixtures import PUBLIC_FIXTURES

DUMPS = Path(__file__).resolve().parents[1] / "recordings" / "dumps"
RECORDINGS = DUMPS.parent
EXPECTED = json.loads((DUMPS / "expected.json").read_text())
FORMATS = {
    "anthropic.request.json": "anthropic",
    "openai-responses.request.json": "openai-responses",
    "gemini-api.request.json": "gemini-api",
    "openai-chat.request.json": "openai",
    "openai-chat.messages.jsonl": "openai",
}


def _figures(session) -> dict:
    results = analyze_tool_result_retention(session.history()).results
    per_tool: dict[str, int] = {}
    for result in results:
        per_tool[result.tool] = per_tool.get(result.tool, 0) + 1
    return {
        "toolResults": len(results),
        "rawChars": sum(r.raw_chars for r in results),
        "largestRawChars": max((r.raw_chars for r in results), default=0),
        "perTool": per_tool,
        "errors": sum(r.is_error for r in results),
    }


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_dump_matches_figures_taken_from_the_raw_body(name):
    session = open_session(DUMPS / name)
    assert (session.agent, session.format) == ("dump", FORMATS[name])
    assert _figures(session) == EXPECTED[name]


def test_alias_opens_the_dump_reader():
    session = open_session(DUMPS / "anthropic.request.json", agent="anthropic")
    assert session.format == "anthropic"


def test_anthropic_system_message_among_blocks_is_still_anthropic():
    # Claude Code puts a role:"system" message inside messages[]; tool_use blocks decide the dialect.
    body = json.loads((DUMPS / "anthropic.request.json").read_text())
    assert any(m["role"] == "system" for m in body["messages"])
    assert dumps.read(DUMPS / "anthropic.request.json").format == "anthropic"


def test_openai_tool_names_come_from_the_calls():
    session = open_session(DUMPS / "openai-chat.request.json")
    names = {p["functionResponse"]["name"] for c in session.history() for p in c["parts"] if "functionResponse" in p}
    assert names == {"exec_command"}


def test_anthropic_image_result_is_a_nested_part(tmp_path):
    body = {"model": "m", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]}]}
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(body))
    (content,) = [c for c in open_session(path).history() if c["role"] == "user"]
    fr = content["parts"][0]["functionResponse"]
    assert fr["response"] == {"output": "see"} and fr["parts"][0]["inlineData"]["mimeType"] == "image/png"


@pytest.mark.parametrize("recording", [
    "gemini/parallel-and-errors/home/.gemini/tmp/w/chats/session-2026-12-02T11-37-007f5c93.jsonl",
    "codex/parallel-and-errors/home/.codex/sessions/2026/12/02/"
    "rollout-2026-12-02T11-38-37-01a2368c-a67d-7452-88e9-5ddece68f35c.jsonl",
    "claude/parallel-and-errors/home/.claude/projects/-tmp-crec-claude-parallel-and-errors-w/"
    "9c26a283-9428-43c6-8446-86dfe01eaab3.jsonl",
])
def test_sniff_does_not_claim_agent_recordings(recording):
    path = RECORDINGS / recording
    assert not dumps.sniff(path, Head.read(path))


def test_sniff_does_not_claim_legacy_gemini_json():
    path = Path(PUBLIC_FIXTURES, "gemini-cli/aim-control_pro_run1_final.json")
    assert not dumps.sniff(path, Head.read(path))


def test_request_log_uses_the_last_body(tmp_path):
    body = json.loads((DUMPS / "openai-chat.request.json").read_text())
    early = {**body, "messages": body["messages"][:3]}
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps(early) + "\n" + json.dumps(body) + "\n")
    assert _figures(open_session(path)) == EXPECTED["openai-chat.request.json"]


def test_torn_and_invalid_lines(tmp_path):
    lines = (DUMPS / "openai-chat.messages.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "messages.jsonl"
    path.write_bytes(b"".join(lines[:2]) + b"{oops\n" + b"".join(lines[2:]) + b'{"role": "tool", "cont')
    session = open_session(path)
    assert _figures(session) == EXPECTED["openai-chat.messages.jsonl"]
    assert [i.severity for i in session.issues] == ["warning", "note"]


def test_non_utf8_dump(tmp_path):
    data = (DUMPS / "openai-chat.request.json").read_bytes().replace(b"Chunk ID", b"Chunk\xffID", 1)
    path = tmp_path / "dump.json"
    path.write_bytes(data)
    assert _figures(open_session(path))["toolResults"] == 6


def test_body_without_messages_names_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"role": "user", "content": "hi"}')  # a bare list, cut short
    with pytest.raises(SourceError, match="bad.json"):
        open_session(path)


def test_unknown_json_is_not_a_dump(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"messages": "not a list", "role": "user"}')
    with pytest.raises(UnknownFormat, match="tried"):
        open_session(path)


# --- AutoBot anchors -----------------------------------------------------------

ANCHOR = "autobot:spill:task-42:bash:0123456789abcdef"


def test_find_anchors_in_the_spill_note_and_json():
    note = f"Output truncated to 2000 of 9000 chars. Read the full output with the read_spilled_output tool using anchor '{ANCHOR}'."
    text = json.dumps({"spilled": True, "anchor": ANCHOR, "note": note})
    found = autobot.find_anchors(text)
    assert [a.text for a in found] == [ANCHOR, ANCHOR]
    assert (found[0].task_id, found[0].tool, found[0].digest) == ("task-42", "bash", "0123456789abcdef")


def test_task_ids_may_hold_colons_and_short_digests_are_not_anchors():
    (anchor,) = autobot.find_anchors("x autobot:spill:run:a:b:grep:00000000000000ff y autobot:spill:r:bash:deadbeef")
    assert (anchor.task_id, anchor.tool) == ("run:a:b", "grep")


def test_artifact_path_is_the_hash_of_the_anchor(tmp_path):
    import hashlib

    (anchor,) = autobot.find_anchors(ANCHOR)
    digest = hashlib.sha256(ANCHOR.encode()).hexdigest()
    assert autobot.artifact_candidates(anchor, [tmp_path]) == [tmp_path / digest[:2] / f"{digest}.json"]
    assert autobot.artifact_path(anchor, [tmp_path]) is None
    (tmp_path / digest[:2]).mkdir()
    (tmp_path / digest[:2] / f"{digest}.json").write_text(json.dumps({"anchor": ANCHOR, "output": "x"}))
    assert autobot.artifact_path(anchor, [tmp_path / "missing", tmp_path]) == tmp_path / digest[:2] / f"{digest}.json"


def test_default_roots_follow_the_environment(tmp_path):
    assert autobot.default_roots({"AUTOBOT_TOOL_OUTPUT_SPILL_ROOT": "/srv/spill"}) == [Path("/srv/spill")]
    assert autobot.default_roots({}, base=tmp_path) == [tmp_path / "data" / "tool_output_spill"]
