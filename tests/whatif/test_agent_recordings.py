"""Claude Code, Gemini CLI and Codex replayed across their own recordings: exact where known, honest where not.

Each recording (tests/whatif/agent_recordings.py) is replayed under every other recording's settings;
every result the replay calls known must be exactly as long as what the scripted model received in that
other recording (its request log, received.json), and start with the same text. Every result it calls
unknown must really be missing from the first recording: the whole output the command printed appears
nowhere in its session or spill files.
"""

from __future__ import annotations

import re

import pytest

from doctor.core.jsvalues import js_len
from tests.whatif.agent_recordings import VARIANTS, full_output, pairs, prepared, recording, settings_of

ALL_PAIRS = [pair for agent in VARIANTS for pair in pairs(agent)]
# What differs between two runs of the same call whatever the settings: session ids, Codex's chunk id and
# wall time, the random name Bash gives its copy of an output.
VOLATILE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|Chunk ID: \w+|"
                      r"Wall time: [\d.]+ seconds|/tool-results/(?!toolu_)\w{9}\.txt")


def same_start(replayed_text: str, received_head: str) -> bool:
    """The replayed text starts as the received one does, volatile parts aside (the head is 160 chars,
    possibly cut inside one of them: its last 40 chars are not compared)."""
    head = VOLATILE.sub("~", received_head[:-40])
    return VOLATILE.sub("~", replayed_text[:len(received_head) + 200]).startswith(head)


def replayed(agent: str, source: str, target: str):
    prep = prepared(agent, source)
    outcomes = prep.module.replay(prep.inputs, prep.base.with_overrides(settings_of(agent, target)).values)
    return prep, outcomes


@pytest.mark.parametrize(("agent", "source", "target"), ALL_PAIRS)
def test_a_known_result_is_what_the_model_received_under_the_other_settings(agent, source, target):
    prep, outcomes = replayed(agent, source, target)
    other = recording(agent, target)
    assert len(outcomes) == len(prep.sites) > 0
    for site, outcome in zip(prep.sites, outcomes):
        if outcome.text is None:
            continue
        got = other.received(site.call_id)["last"]
        assert js_len(outcome.text) == got["chars"], (site.ordinal, site.tool, outcome.layer)
        assert same_start(outcome.text, got["head"]), site.ordinal


@pytest.mark.parametrize(("agent", "source", "target"), ALL_PAIRS)
def test_an_unknown_result_is_not_in_the_recording(agent, source, target):
    prep, outcomes = replayed(agent, source, target)
    kept = recording(agent, source).files_text()
    for site, inp, outcome in zip(prep.sites, prep.inputs, outcomes):
        if outcome.text is not None:
            continue
        assert outcome.why
        assert inp.raw.text is None, (site.ordinal, "the raw output was there, yet the replay gave up")
        whole = full_output(str(site.args.get("cmd") or site.args.get("command") or ""))
        assert whole is not None and whole not in kept, site.ordinal
        # the bounds the replay gives hold what the model really received there
        assert outcome.low <= recording(agent, target).received(site.call_id)["last"]["chars"] <= outcome.high


def test_the_replays_know_most_results():
    """Unknowns are the exception: Codex's outputs over 64 KiB that a replay needs more of, nothing else."""
    unknown = {}
    for agent, source, target in ALL_PAIRS:
        _, outcomes = replayed(agent, source, target)
        unknown[agent] = unknown.get(agent, 0) + sum(o.text is None for o in outcomes)
    assert unknown["claude"] == unknown["gemini"] == 0
    assert 0 < unknown["codex"] <= 16 and unknown["codex-catalog"] <= 2
