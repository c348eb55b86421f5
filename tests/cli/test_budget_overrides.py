"""Per-tool budget overrides from the config file and the command line, through `doctor memory`."""

import json
from pathlib import Path

import pytest

from doctor.cli import main

SESSION = Path(__file__).parents[1] / "recordings" / "qwen" / "multi-turn" / "session.jsonl"


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No settings or config of the machine running the tests leak in."""
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "qwen-home"))
    monkeypatch.setenv("QWEN_CODE_SYSTEM_SETTINGS_PATH", str(tmp_path / "none.json"))
    monkeypatch.setenv("DOCTOR_CONFIG", str(tmp_path / "doctor.toml"))
    return tmp_path


def report(capsys, *args) -> dict:
    code = main(["memory", str(SESSION), "--json", *args])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def shell_row(data: dict) -> dict:
    return next(row for row in data["retention"]["perTool"] if row["tool"] == "run_shell_command")


def test_defaults_equal_qwens_answer(capsys):
    expected = json.loads((SESSION.parent / "expected.json").read_text())["toolResultRetention"]
    assert report(capsys)["toolResultRetention"] == expected


def test_config_file_override_is_used_and_labelled(capsys, isolated):
    (isolated / "doctor.toml").write_text('[budgets]\nrun_shell_command = 100\n')
    data = report(capsys)
    assert shell_row(data)["budget"] == {"chars": 100, "source": "override",
                                         "detail": f"[budgets] run_shell_command in {isolated / 'doctor.toml'}"}
    assert data["settings"]["overrideOrigins"] == {"run_shell_command": f"[budgets] run_shell_command in {isolated / 'doctor.toml'}"}
    assert data["toolResultRetention"]["oversizedResultCount"] > 0


def test_command_line_wins_over_the_config_file(capsys, isolated):
    (isolated / "doctor.toml").write_text('[budgets]\nrun_shell_command = 100\n')
    data = report(capsys, "--tool-budget", "run_shell_command=inf")
    assert shell_row(data)["budget"]["chars"] is None  # infinite
    assert data["toolResultRetention"]["oversizedResultCount"] == 0


def test_bad_config_is_a_usage_error_naming_the_file(capsys, isolated):
    (isolated / "doctor.toml").write_text('[budgets]\nrun_shell_command = "lots"\n')
    assert main(["memory", str(SESSION), "--json"]) == 2
    assert "doctor.toml" in capsys.readouterr().err


def test_deep_sizes_the_history_held_in_memory(capsys):
    from doctor.sources.registry import open_session

    data = report(capsys, "--deep")
    history = data["process"]["history"]
    assert history["entries"] == len(list(open_session(SESSION).history()))
    assert history["deepSize"]["complete"] and history["deepSize"]["bytes"] > 0
    assert data["process"]["typeSummary"]
