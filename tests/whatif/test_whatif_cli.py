"""`doctor whatif` through its command line: keys in the agent's own words, `default`, refusals, formats."""

from __future__ import annotations

import json

import pytest

from tests.whatif.recordings import HERE, doctor, received_chars, unpack

RECORDINGS = HERE.parent
DUMP = RECORDINGS / "dumps" / "anthropic.request.json"  # a message dump: no agent whose limits can be replayed


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    root = tmp_path_factory.mktemp("qwen-whatif")
    return {v: unpack(v, root) for v in ("default", "threshold-10000")}, tmp_path_factory.mktemp("home")


def test_default_unsets_a_key_so_the_shell_budget_is_30000_again(sessions):
    paths, home = sessions
    ten = ("whatif", paths["threshold-10000"], "--json", "--settings", HERE / "threshold-10000" / "settings.json")
    unset = json.loads(doctor(*ten, "--set", "tools.truncateToolOutputThreshold=default", home=home).stdout)
    assert unset["after"]["settings"]["thresholdExplicit"] is False and unset["after"]["settings"]["shellBudget"] == 30_000
    shells = [c for c in unset["changes"] if c["tool"] == "run_shell_command"]
    assert len(shells) == 13 and all(c["known"] for c in shells)
    assert all(c["afterChars"] == received_chars("default")[c["callId"]] for c in shells)
    # Set to 25,000, its default value, the key is explicit: the shell budget follows it, and the 29,160-char
    # outputs that the default session kept whole (batch budget aside) are cut by the shell itself.
    explicit = json.loads(doctor("whatif", paths["default"], "--json", "--set", "tools.truncateToolOutputThreshold=25000",
                                 home=home).stdout)
    assert explicit["after"]["settings"]["shellBudget"] == 25_000
    cut = {c["callId"]: c for c in explicit["changes"]}["call_b09_shell_w107"]
    assert cut["known"] and cut["afterLayer"] == "in-tool truncation" and cut["afterChars"] < 5_000


def test_an_unknown_key_is_refused_with_the_agents_keys(sessions):
    paths, home = sessions
    result = doctor("whatif", paths["default"], "--set", "bashOutputMaxChars=10000", home=home)
    assert result.returncode == 2 and result.stdout == ""
    assert "Qwen Code 0.24.4 has no limit 'bashOutputMaxChars'" in result.stderr
    for key in ("tools.truncateToolOutputThreshold", "tools.truncateToolOutputLines", "tools.toolOutputBatchBudget"):
        assert key in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("pair", ["tools.truncateToolOutputLines=lots", "tools.truncateToolOutputLines", "=5"])
def test_a_bad_set_is_one_line_and_exit_2(sessions, pair):
    paths, home = sessions
    result = doctor("whatif", paths["default"], "--set", pair, home=home)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and result.stderr.startswith("doctor whatif: ")


def test_an_agent_without_a_replay_says_which_agents_have_one(tmp_path):
    result = doctor("whatif", DUMP, "--set", "x=1", home=tmp_path)
    assert result.returncode == 2
    assert "replays qwen, claude, gemini, codex sessions; this one is a dump session" in result.stderr


def test_text_markdown_and_html_name_the_key_and_the_saving(sessions):
    paths, home = sessions
    for fmt, marker in (("text", "Total retained chars"), ("markdown", "| Total retained chars"), ("html", "<table>")):
        result = doctor("whatif", paths["default"], "--format", fmt, "--set", "tools.truncateToolOutputThreshold=10000",
                        home=home)
        assert result.returncode == 0, result.stderr
        assert marker in result.stdout and "tools.truncateToolOutputThreshold" in result.stdout
        assert "208,038" in result.stdout  # 307,633 → 99,595, Qwen's own figures for both recordings


def test_output_file_is_written_private(sessions, tmp_path):
    paths, home = sessions
    target = tmp_path / "answer.json"
    result = doctor("whatif", paths["default"], "--json", "-o", target, home=home)
    assert result.returncode == 0 and result.stdout == ""
    assert target.stat().st_mode & 0o777 == 0o600 and json.loads(target.read_text())["saved"]["chars"] == 0


def test_json_shows_hostile_names_escaped_on_stdout_and_in_a_file(sessions, tmp_path):
    """A call id holding a CSI (C1) and a bidi override reaches `--json` as escapes, printed and written alike
    (the answer is printed as UTF-8 bytes, made inert without being decoded)."""
    paths, home = sessions
    hostile_id = "call_b09\x9b31m\u202eshell"
    session = tmp_path / "hostile" / "session.jsonl"
    session.parent.mkdir()
    session.write_text(paths["default"].read_text().replace('"call_b09_shell_w107"', json.dumps(hostile_id)))
    target = tmp_path / "answer.json"
    printed = doctor("whatif", session, "--json", "--set", "tools.truncateToolOutputThreshold=10000", home=home)
    written = doctor("whatif", session, "--json", "--set", "tools.truncateToolOutputThreshold=10000", "-o", target,
                     home=home)
    assert printed.returncode == 0 and written.returncode == 0, printed.stderr + written.stderr
    for text in (printed.stdout, target.read_text()):
        assert "\x9b" not in text and "\u202e" not in text and "\\u009b31m\\u202eshell" in text
        answer = json.loads(text)
        assert hostile_id in {change["callId"] for change in answer["changes"]}
    assert printed.stdout == target.read_text()
