"""The oversized alarm `doctor hook` raises after a tool call, on the hook payload shapes the agents send."""

from __future__ import annotations

import io
import json
import sys

import pytest

from doctor.integrations.alarm import check
from doctor.integrations.delivery import response_text
from tests.report.report_support import run_cli


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    monkeypatch.delenv("DOCTOR_CONFIG", raising=False)


@pytest.fixture
def read_file_budget(tmp_path, monkeypatch):
    """A team budget of 25,000 chars for read_file, which Qwen itself never cuts by chars (it pages)."""
    config = tmp_path / "doctor.toml"
    config.write_text("[budgets]\nread_file = 25000\n")
    monkeypatch.setenv("DOCTOR_CONFIG", str(config))


@pytest.mark.parametrize("chars, fires", [(50_500, False), (50_501, True)])
def test_qwens_rule_is_two_budgets_plus_500(read_file_budget, chars, fires):
    assert (check("qwen", "read_file", "x" * chars, None) is not None) == fires


def test_astral_characters_count_as_two_units(read_file_budget):
    assert check("qwen", "read_file", "🙂" * 25_251, None) is not None  # 50,502 UTF-16 units


def test_qwen_judges_what_its_gate_and_truncation_leave(read_file_budget):
    """An unregistered tool's 50,501 chars are persisted by Qwen's gate (threshold 25,000 + 3,000); the
    model gets the stub, which Qwen's rule skips."""
    assert check("qwen", "unknown_tool", "x" * 50_501, None) is None


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
    config.write_text("[budgets]\nBash = 100000\nRead = 150000\n")
    monkeypatch.setenv("DOCTOR_CONFIG", str(config))
    assert check("qwen", "Bash", "x" * 60_000, None) is None
    assert check("claude", "Read", _read("x" * 120_000), None) is None  # [budgets] win for every agent
    config.write_text("[budgets]\nRead = 50000\n")
    assert check("claude", "Read", _read("x" * 60_000), None).chars == 60_002  # "1\t" + the line


def _read(content: str) -> dict:
    """Claude's Read payload (tool_response as tests/integrations/hook_payloads.py describes it)."""
    return {"type": "text", "file": {"filePath": "/p/f.txt", "content": content, "numLines": 1, "startLine": 1,
                                     "totalLines": 1}}


def test_gemini_judges_by_its_threshold_and_is_silent_on_what_it_cuts(tmp_path):
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"tools": {"truncateToolOutputThreshold": 60000}}')
    assert check("gemini", "read_file", {"llmContent": "x" * 60_000}, None) is None
    alarm = check("gemini", "read_file", {"llmContent": "x" * 60_001}, None)
    assert f"tools.truncateToolOutputThreshold in {settings}" in alarm.for_user()
    assert "60,000-char limit" in alarm.for_model() and "twice" not in alarm.for_model()
    assert check("gemini", "run_shell_command", {"llmContent": "x" * 168_968}, None) is None  # Gemini cuts it


def test_claude_is_silent_on_what_it_persists(tmp_path):
    persisted = {"stdout": "x" * 30_000, "stderr": "", "persistedOutputPath": "/p/tool-results/b.txt"}
    assert check("claude", "Bash", persisted, None) is None
    assert check("claude", "Grep", "x" * 90_000, None) is None  # above Grep's 20,000 gate: persisted
    alarm = check("claude", "Read", _read("x" * 100_001), None)
    assert "Claude Code's 25,000-token limit (≈100,000 chars) (built-in default of Claude Code 2.1.332)" \
        in alarm.for_user()


def test_codex_reads_the_models_policy_and_its_tool_name(tmp_path, monkeypatch):
    config = tmp_path / "doctor.toml"
    config.write_text("[budgets]\nexec_command = 5000\n")
    monkeypatch.setenv("DOCTOR_CONFIG", str(config))
    assert check("codex", "Bash", "x" * 6_000, None, model="gpt-5.5") is None  # 5,000 + 1,000 header allowance
    # doctor's own budget, from its config file (not Codex's, nor a flag); the header allowance is Codex's
    assert f"over doctor's 5,000-byte budget + 1,000 bytes of Codex CLI's header ([budgets] exec_command in {config})" \
        in check("codex", "Bash", "x" * 6_001, None, model="gpt-5.5").for_user()


def _hook(capsys, monkeypatch, payload, *flags):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    return run_cli(capsys, "hook", "gemini", *flags)


def test_after_tool_answer_names_the_spill_and_tells_the_model_only_when_asked(capsys, monkeypatch, tmp_path):
    spill = tmp_path / ".gemini" / "tmp" / "project" / "tool-outputs" / "session-1" / "grep.txt"  # Gemini's layout
    spill.parent.mkdir(parents=True)
    spill.write_text("m")
    payload = {"hook_event_name": "AfterTool", "tool_name": "grep_search",
               "tool_response": {"llmContent": "m" * 45_000 + f"\nFull output saved to: {spill}"}}
    code, out, _ = _hook(capsys, monkeypatch, payload)
    assert code == 0 and set(json.loads(out)) == {"systemMessage"}
    assert f"full output in {spill.resolve()}" in json.loads(out)["systemMessage"]
    code, out, _ = _hook(capsys, monkeypatch, payload, "--tell-model")
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "AfterTool" and "page in only the part you need" in context["additionalContext"]


def test_a_small_result_is_silent(capsys, monkeypatch):
    code, out, _ = _hook(capsys, monkeypatch, {"hook_event_name": "AfterTool", "tool_name": "x",
                                                "tool_response": {"llmContent": "ok"}}, "--tell-model")
    assert (code, out) == (0, "")
