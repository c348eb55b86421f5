"""Each agent's session reported in that agent's own measure, checked against the raw recording.

For every real Claude Code, Gemini CLI and Codex session (tests/recordings, tests/fixtures/public),
what each result sent and its tokens are computed here from the raw records, without doctor's
readers: the text the client sends (Claude: the content string or its text blocks; Gemini: the
response's output or error; Codex: the output string, in UTF-8 bytes), and the client's own token
estimate (Claude: round(chars / 4) per text block; Gemini: floor((name + JSON of the response) / 4);
Codex: ceil(bytes / 4), which is what Codex itself writes as "Original token count"). doctor's
`--json --results` must carry exactly those, beside Qwen's untouched figures; at the margin of a
limit the verdict follows the agent's measure.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
RECORDINGS = TESTS / "recordings"
PUBLIC = TESTS / "fixtures" / "public"


def sessions(agent: str, pattern: str, public: str) -> list[Path]:
    found = [path for path in (RECORDINGS / agent).rglob(pattern) if "subagents" not in path.parts]
    return sorted(found) + sorted((PUBLIC / public).glob("*.json*"))


def js_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_round(value: float) -> int:
    return math.floor(value + 0.5)


def records(path: Path) -> list:
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(raw)["messages"]
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def claude_expected(path: Path) -> dict[str, tuple[int, int]]:
    """tool_use_id -> (chars sent, Claude's tokens) for every tool_result block in the file."""
    found = {}
    for record in records(path):
        content = (record.get("message") or {}).get("content") if record.get("type") in ("user", "assistant") else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or not str(block.get("type", "")).endswith("tool_result"):
                continue
            body = block.get("content")
            texts = [body] if isinstance(body, str) else \
                [item["text"] for item in body or () if isinstance(item, dict) and item.get("type") == "text"]
            images = 0 if isinstance(body, str) else \
                sum(isinstance(item, dict) and item.get("type") in ("image", "document") for item in body or ())
            found[block["tool_use_id"]] = (sum(map(js_length, texts)),
                                           sum(js_round(js_length(text) / 4) for text in texts) + 2000 * images)
    return found


def gemini_expected(path: Path) -> dict[str, tuple[int, int]]:
    """call id -> (chars of the output or error, Gemini's tokens) for the last copy of each response."""
    found = {}
    for record in records(path):
        messages = record["$set"]["messages"] if isinstance(record.get("$set"), dict) and "messages" in record["$set"] \
            else [record]
        for message in messages:
            parts = [part for part in (message.get("content") if isinstance(message.get("content"), list) else ())]
            for call in message.get("toolCalls") or ():  # legacy files: the response only in the call's result
                result = call.get("result")
                parts += result if isinstance(result, list) else []
            for part in parts:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if not response:
                    continue
                body = response["response"]
                text = body.get("output") if isinstance(body.get("output"), str) else body.get("error", "")
                as_json = json.dumps(body, ensure_ascii=False, separators=(",", ":"))  # JSON.stringify's form
                found[response["id"]] = (js_length(text), (js_length(response["name"]) + js_length(as_json)) // 4)
    return found


def codex_expected(path: Path) -> dict[str, tuple[int, int]]:
    """call_id -> (UTF-8 bytes of the output, Codex's tokens)."""
    found = {}
    for record in records(path):
        item = record.get("payload") if record.get("type") == "response_item" else record
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
            size = len(item["output"].encode("utf-8"))
            found[item["call_id"]] = (size, -(-size // 4))
    return found


def doctor(*args) -> dict:
    run = subprocess.run([sys.executable, "-m", "doctor", "memory", *map(str, args), "--json", "--results"],
                         capture_output=True, text=True, timeout=120,
                         env={"HOME": "/nonexistent", "PATH": "/usr/bin:/bin"})
    assert run.returncode in (0, 3), run.stderr
    return json.loads(run.stdout)


CASES = [*(("claude", path, claude_expected) for path in sessions("claude", "*.jsonl", "claude-code")),
         *(("gemini", path, gemini_expected) for path in sessions("gemini", "session-*.json*", "gemini-cli")),
         *(("codex", path, codex_expected) for path in sessions("codex", "rollout-*.jsonl", "codex"))]


@pytest.mark.parametrize("agent, path, expected_of", CASES, ids=[f"{a}:{p.name[:48]}" for a, p, _ in CASES])
def test_each_result_is_reported_as_its_agent_measures_it(agent, path, expected_of):
    expected = expected_of(path)
    report = doctor(path)
    results = report["retention"]["results"]
    own = report["agentMeasure"]
    assert own["agent"] == agent and own["unit"] == ("bytes" if agent == "codex" else "chars")
    assert {row["callId"]: (row["sent"], row["sentTokens"]) for row in results} == \
        {row["callId"]: expected[row["callId"]] for row in results}
    assert (own["sent"], own["sentTokens"]) == (sum(expected[row["callId"]][0] for row in results),
                                               sum(expected[row["callId"]][1] for row in results))
    # Qwen's estimator stays as it is, beside: the output plus 64 a result for these text results
    assert report["toolResultRetention"]["totalChars"] == sum(row["chars"] for row in results)


def test_codex_writes_the_same_token_estimate():
    """Codex states its own estimate of an output in the exec header ("Original token count: N"): for
    every output it did not cut, N is ceil(UTF-8 bytes / 4) of the output after the header."""
    checked = 0
    for path in sessions("codex", "rollout-*.jsonl", "codex"):
        for record in records(path):
            item = record.get("payload") or {}
            if record.get("type") != "response_item" or item.get("type") != "function_call_output":
                continue
            header = re.match(r"Chunk ID: \w+\nWall time: [\d.]+ seconds\nProcess exited with code \d+\n"
                              r"Original token count: (\d+)\nOutput:\n", item["output"])
            if header and "truncated" not in item["output"][:400]:
                body = item["output"][header.end():]
                assert int(header[1]) == -(-len(body.encode("utf-8")) // 4)
                checked += 1
    assert checked >= 5


def test_qwen_sessions_have_no_other_measure():
    report = doctor(RECORDINGS / "qwen" / "oversized-alarm" / "session.jsonl")
    assert "agentMeasure" not in report
    assert all("sent" not in row for row in report["retention"]["results"] + report["retention"]["perTool"])


def _codex_output(path: Path) -> dict:
    """The largest output of the recording that holds a character of more than one UTF-8 byte."""
    outputs = [record["payload"] for record in records(path) if record.get("type") == "response_item"
               and record["payload"].get("type") == "function_call_output"]
    return max((item for item in outputs if not item["output"].isascii()), key=lambda item: len(item["output"]))


def test_codex_margin_the_verdict_follows_its_bytes():
    """A Codex output with "…" in it (3 bytes, 1 UTF-16 char): held to a budget between its chars and its
    bytes, it is oversized in Codex's measure, which a UTF-16 count (the old rule) would have let through."""
    path = next((RECORDINGS / "codex" / "big-outputs").rglob("rollout-*.jsonl"))
    item = _codex_output(path)
    size, chars = len(item["output"].encode("utf-8")), js_length(item["output"])
    assert size > chars  # the margin exists
    header = 1000  # Codex's exec header allowance (doctor.core.agent_rules.codex)
    for budget, oversized in ((size - header - 1, True), (size - header, False)):
        assert chars <= budget + header  # by UTF-16 chars it would never be oversized here
        report = doctor(path, "--tool-budget", f"exec_command={budget}")
        row = next(row for row in report["retention"]["results"] if row["callId"] == item["call_id"])
        assert (row["sent"], row["oversized"]) == (size, oversized)
        assert report["rules"]["unit"] == "bytes" and row["budget"]["chars"] == budget
        assert row["budgetRatio"] == round(size / budget, 3)


def test_claude_margin_the_limit_meets_the_chars_claude_sent():
    """Claude holds a result to its limit by the chars it sends: a Read at exactly its limit is not
    oversized, one char less and it is; the report shows those chars, not Qwen's estimate (+64)."""
    path = next((RECORDINGS / "claude" / "big-outputs").rglob("298108a5-*.jsonl"))
    expected = claude_expected(path)
    read = max((row for row in doctor(path)["retention"]["results"] if row["tool"] == "Read"), key=lambda r: r["sent"])
    sent = expected[read["callId"]][0]
    assert read["chars"] == sent + 64  # Qwen's estimator: above the limit at the margin below
    for budget, oversized in ((sent, False), (sent - 1, True)):
        report = doctor(path, "--tool-budget", f"Read={budget}")
        row = next(row for row in report["retention"]["results"] if row["callId"] == read["callId"])
        assert (row["sent"], row["oversized"]) == (sent, oversized)
        text = subprocess.run([sys.executable, "-m", "doctor", "memory", str(path), "--format", "text",
                               "--tool-budget", f"Read={budget}"], capture_output=True, text=True, timeout=120,
                              env={"HOME": "/nonexistent", "PATH": "/usr/bin:/bin"}).stdout
        line = next(line for line in text.splitlines() if line.strip().startswith(f"#{read['ordinal']} "))
        assert f" {sent:,} " in line and f" {sent + 64:,} " not in line
        assert ("yes" in line.split()) == oversized
