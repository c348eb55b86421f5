"""`--sweep` and `--recommend` through the CLI, on the real recording."""

from __future__ import annotations

import json

import pytest

from tests.whatif.recordings import doctor, unpack

THRESHOLD = "tools.truncateToolOutputThreshold"


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    return unpack("default", tmp_path_factory.mktemp("qwen-whatif")), tmp_path_factory.mktemp("home")


def test_each_point_of_a_sweep_is_the_replay_of_that_value(session):
    path, home = session
    sweep = json.loads(doctor("whatif", path, "--json", "--sweep", f"{THRESHOLD}=10000,25000,default", home=home).stdout)
    assert sweep["key"] == THRESHOLD and sweep["sessionValue"] is None
    assert [p["value"] for p in sweep["points"]] == [10000, 25000, None]
    for point in sweep["points"]:
        value = "default" if point["value"] is None else point["value"]
        single = json.loads(doctor("whatif", path, "--json", "--set", f"{THRESHOLD}={value}", home=home).stdout)
        assert point["saved"] == single["saved"] and point["after"] == single["after"]["toolResultRetention"]
    assert sweep["points"][2]["saved"]["chars"] == 0  # unset, as the session ran


def test_a_range_sweep_has_twenty_values_and_draws_both_charts(session):
    path, home = session
    sweep = json.loads(doctor("whatif", path, "--json", "--sweep", f"{THRESHOLD}=5000..100000", home=home).stdout)
    assert [p["value"] for p in sweep["points"]] == list(range(5000, 100001, 5000))
    page = doctor("whatif", path, "--format", "html", "--sweep", f"{THRESHOLD}=5000..100000:5000", home=home).stdout
    assert page.count("<svg") == 2 and "Context saved per later turn" in page and "Results cut by" in page
    text = doctor("whatif", path, "--sweep", f"{THRESHOLD}=5000..100000:5000", home=home).stdout
    assert "context saved per later turn (chars)" in text and "█" in text


def test_a_sweep_too_long_or_backwards_is_refused(session):
    path, home = session
    for spec in (f"{THRESHOLD}=1..100000:1", f"{THRESHOLD}=100000..5000", "nope=1..2"):
        result = doctor("whatif", path, "--sweep", spec, home=home)
        assert result.returncode == 2 and result.stderr.startswith("doctor whatif: ") and result.stdout == ""


def test_recommend_names_the_key_and_says_when_data_is_thin(session):
    path, home = session
    answer = json.loads(doctor("whatif", path, "--json", "--recommend", "--keep", "0.5", home=home).stdout)
    tools = {item["tool"]: item for item in answer["tools"]}
    shell = tools["run_shell_command"]
    assert shell["key"] == THRESHOLD and shell["results"] == 13 and shell["budget"] is not None
    assert "too few to recommend" in tools["web_fetch"]["note"] and tools["web_fetch"]["budget"] is None
    assert tools["grep_search"]["key"] == "—" and "fixed in Qwen Code 0.24.4" in tools["grep_search"]["note"]
    # 12 of the 13 shell results are outputs (one failed: an error, not sized); half of them, 6, fit whole
    # under the recommended threshold (the batch budget may still cut them afterwards).
    single = json.loads(doctor("whatif", path, "--json", "--set", f"{THRESHOLD}={shell['budget']}", home=home).stdout)
    shells = [c for c in single["changes"] if c["tool"] == "run_shell_command"]
    whole = sum(1 for c in shells if c["afterLayer"] == "none" or c["afterLayer"] == "batch budget")
    assert whole >= 6 and single["saved"]["chars"] == shell["savedSessionChars"]
