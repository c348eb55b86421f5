"""`doctor whatif` against the real client: every recording replayed under every other recording's settings.

The same scripted session was recorded by the real Qwen Code 0.24.4 under seven settings
(tests/recordings/qwen-whatif). Replaying recording A with B's settings (through the CLI, as a
subprocess) must give, for every result it calls known, exactly the size the scripted model received
under B; `after.toolResultRetention` must be Qwen's own `/doctor memory --json` answer on B (its
`largeOutputsInUIHistory` is the interactive figure, the one `doctor memory` reports: Qwen's `-p`
answer is always 0 there); where results are unknown, the truth must lie within the bound the answer
states; and every result called unknown must really be out of A's reach.
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from tests.whatif.recordings import (
    VARIANTS,
    doctor,
    expected,
    kept_lines,
    received_chars,
    received_texts,
    set_args,
    unpack,
)

PAIRS = [(a, b) for a in VARIANTS for b in VARIANTS]


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    root = tmp_path_factory.mktemp("qwen-whatif")
    home = tmp_path_factory.mktemp("home")
    return {variant: unpack(variant, root) for variant in VARIANTS}, home


@pytest.fixture(scope="module")
def replay(unpacked):
    sessions, home = unpacked

    @cache
    def run(a: str, b: str) -> dict:
        result = doctor("whatif", sessions[a], "--json", *set_args(a, b), home=home)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    return run


@pytest.fixture(scope="module")
def memory_on(unpacked):
    sessions, home = unpacked

    @cache
    def run(variant: str) -> dict:
        args = set_args(variant, variant)[:2]  # --settings <its own>, if it has one
        result = doctor("memory", sessions[variant], "--json", *args, home=home)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["toolResultRetention"]

    return run


@pytest.mark.ci
@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-as-{b}" for a, b in PAIRS])
def test_replay_gives_what_the_model_received_under_the_other_settings(replay, memory_on, a, b):
    answer = replay(a, b)
    assert list(answer) == ["before", "after", "changes", "saved"]
    received = received_chars(b)
    results = answer["after"]["retention"]["results"]
    assert [c["ordinal"] for c in answer["changes"]] == [r["ordinal"] for r in results] == list(range(len(results)))
    for change, result in zip(answer["changes"], results):
        assert change["callId"] == result["callId"]
        if change["known"]:
            assert change["afterChars"] == result["rawChars"] == received[change["callId"]], change
    truth = expected(b)
    got = answer["after"]["toolResultRetention"]
    saved = answer["saved"]
    if saved["exact"]:
        want = {**truth, "largeOutputsInUIHistory": memory_on(b)["largeOutputsInUIHistory"]}
        assert got == want
    else:
        off = saved["couldBeOffBy"]["chars"]
        if off is not None:
            assert abs(got["totalChars"] - truth["totalChars"]) <= off
        assert got["toolResultCount"] == truth["toolResultCount"]
    assert saved["resultsUnknown"] == sum(1 for c in answer["changes"] if not c["known"])


@pytest.mark.parametrize("a", VARIANTS)
def test_replay_under_the_sessions_own_settings_is_the_identity(replay, a):
    answer = replay(a, a)
    assert all(c["known"] and c["afterChars"] == c["beforeChars"] for c in answer["changes"])
    assert answer["after"]["toolResultRetention"] == answer["before"]["toolResultRetention"]
    assert answer["saved"]["chars"] == 0 and answer["saved"]["exact"]


def test_a_replay_that_shows_more_than_the_recording_kept_says_unknown(replay):
    answer = replay("default", "threshold-off")
    unknown = {c["callId"]: c for c in answer["changes"] if not c["known"]}
    # read_file paged at 25,000 chars and grep capped at 25,000 chars: with no threshold they would show more.
    assert {"call_w05_read_big", "call_w07_grep_many", "call_w12_read_medium"} <= set(unknown)
    assert "the recording kept" in unknown["call_w05_read_big"]["why"]


def test_every_unknown_result_is_really_out_of_reach(replay, unpacked):
    """An unknown result either shows, under B, a line the A recording keeps nowhere (session or spill
    files), or shares its turn's batch budget with such a result while B's budget cut it."""
    sessions, _ = unpacked
    checked = 0
    for a, b in PAIRS:
        changes = replay(a, b)["changes"]
        unknown = [c for c in changes if not c["known"]]
        if not unknown:
            continue
        kept = kept_lines(sessions[a])
        texts = received_texts(b)
        missing = {c["callId"] for c in unknown if any(line and line not in kept for line in texts[c["callId"]].split("\n"))}
        for change in unknown:
            if change["callId"] in missing:
                checked += 1
                continue
            assert "batch budget" in change["why"], (a, b, change)
            assert texts[change["callId"]].startswith("Tool output truncated."), (a, b, change)
            batch = "w" if change["callId"].startswith("call_w") else "b"
            assert any(other["callId"] in missing and other["callId"].startswith(f"call_{batch}") for other in unknown)
    assert checked >= 10
