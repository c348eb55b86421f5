"""The oversized alarm `doctor hook` raises after a tool call, on the hook payload shapes the agents send."""

from __future__ import annotations

import io
import json
import sys

import pytest

from doctor.integrations.alarm import check, response_text
from tests.report.report_support import run_cli


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    monkeypatch.delenv("DOCTOR_CONFIG", raising=False)


@pytest.mark.parametrize("chars, fires", [(50_500, False), (50_501, True)])
def test_the_rule_is_two_budgets_plus_500(chars, fires):
    assert (check("read_file_unknown_tool", "x" * chars, None) is not None) == fires  # threshold 25,000


def test_astral_characters_count_as_two_units():
    assert check("unknown", "🙂" * 25_251, None) is not None  # 50,502 UTF-16 units


@pytest.mark.parametrize("response, text", [
    ({"stdout": "ab", "stderr": "c", "interrupted": False}, "abc"),  # Claude Bash
    ({"llmContent": "model", "returnDisplay": "model"}, "model"),  # Gemini: the display copy is not counted
    ({"output": "o", "other": "zzz"}, "o"),
    ([{"type": "text", "text": "t1"}, {"type": "text", "text": "t2"}], "t1t2"),  # content blocks: their text
])
def test_the_model_facing_text_is_measured(response, text):
    assert response_text(response) == text


def test_a_configured_budget_is_honoured(tmp_path, monkeypatch):
    config = tmp_path / "doctor.toml"
    config.write_text("[budgets]\nBash = 100000\n")
    monkeypatch.setenv("DOCTOR_CONFIG", str(config))
    assert check("Bash", "x" * 60_000, None) is None


def _hook(capsys, monkeypatch, payload, *flags):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    return run_cli(capsys, "hook", "gemini", *flags)


def test_after_tool_answer_names_the_spill_and_tells_the_model_only_when_asked(capsys, monkeypatch):
    payload = {"hook_event_name": "AfterTool", "tool_name": "grep_search",
               "tool_response": {"llmContent": "m" * 45_000 + "\nFull output saved to: /tmp/spill/grep.txt"}}
    code, out, _ = _hook(capsys, monkeypatch, payload)
    assert code == 0 and set(json.loads(out)) == {"systemMessage"}
    assert "/tmp/spill/grep.txt" in json.loads(out)["systemMessage"]
    code, out, _ = _hook(capsys, monkeypatch, payload, "--tell-model")
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "AfterTool" and "page in only the part you need" in context["additionalContext"]


def test_a_small_result_is_silent(capsys, monkeypatch):
    code, out, _ = _hook(capsys, monkeypatch, {"hook_event_name": "AfterTool", "tool_name": "x",
                                                "tool_response": {"llmContent": "ok"}}, "--tell-model")
    assert (code, out) == (0, "")
