"""Properties of the Claude Code, Gemini CLI and Codex replays.

- Under the session's own settings a replay is the identity: every recording the real clients made
  (the what-if ones and every older one) comes back char for char, its layers recomputed from the raw
  output wherever the recording keeps it.
- Raising a limit never shrinks a result below what the agent would have sent under the lower limit or
  the whole output, whichever is shorter. The plain "never shrinks" is false, and the clients show why:
  a cut result carries the agent's notice, so an output just over the limit is longer cut than whole.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doctor.assemble import ReportOptions
from doctor.core.jsvalues import js_len
from doctor.sources.registry import open_session
from doctor.whatif import claude, claude_layers, codex_layers, gemini, replay
from doctor.whatif.model import FROM_SESSION, RawOutput, ReplayInput
from tests.whatif.agent_recordings import RECORDINGS, SESSION_FILES, VARIANTS, prepared

def recordings_of(agent: str):
    for folder in sorted(p for p in (RECORDINGS / agent).rglob("meta.json")):
        sessions = [p for p in folder.parent.glob(SESSION_FILES[agent])]
        if sessions:
            yield folder.parent, sessions[0]


ALL_RECORDINGS = [(agent, folder, session) for agent in ("claude", "gemini", "codex")
                  for folder, session in recordings_of(agent)]


@pytest.mark.parametrize(("agent", "folder", "session"), ALL_RECORDINGS,
                         ids=[f"{a}/{f.relative_to(RECORDINGS / a)}" for a, f, _ in ALL_RECORDINGS])
def test_a_replay_under_the_sessions_own_settings_is_the_identity(agent, folder, session):
    prep = replay.prepare(open_session(session), ReportOptions(env={"HOME": str(folder / "home")}))
    outcomes = prep.module.replay(prep.inputs, prep.base.values)
    assert [o.text for o in outcomes] == [site.recorded for site in prep.sites]
    what_if = prep.replay({})
    assert what_if.saved()["chars"] == 0 and what_if.saved()["exact"]
    assert what_if.after.to_dict()["toolResultRetention"] == what_if.before.to_dict()["toolResultRetention"]


RAISED = {"claude": ("bashOutputMaxChars", (4_000, 10_000, 30_000, 50_000, 100_000, 128_000)),
          "gemini": ("tools.truncateToolOutputThreshold", (5_000, 10_000, 40_000, 60_000, 150_000, 1_000_000)),
          "codex": ("tool_output_token_limit", (500, 1_000, 2_500, 12_000, 50_000)),
          "codex-catalog": ("tool_output_token_limit", (1_000, 10_000, 12_000, 50_000)),
          "claude-cyrillic": ("BASH_MAX_OUTPUT_LENGTH", (4_000, 30_000, 65_799, 65_800, 100_000, 150_000))}


@pytest.mark.parametrize(("agent", "variant"), [(a, v) for a in RAISED for v in VARIANTS[a]])
def test_raising_the_limit_never_shrinks_a_recorded_result_below_the_lower_limits_or_the_whole(agent, variant):
    prep = prepared(agent, variant)
    key, values = RAISED[agent]
    previous = None
    for value in values:
        outcomes = prep.module.replay(prep.inputs, prep.base.with_overrides({key: value}).values)
        sizes = [None if o.text is None else js_len(o.text) for o in outcomes]
        wholes = [None if i.raw.text is None else js_len(i.raw.text) for i in prep.inputs]
        if previous is not None:
            for before, after, whole in zip(previous, sizes, wholes):
                if None not in (before, after):
                    assert after >= min(before, whole if whole is not None else before)
        previous = sizes


TEXT = st.text(alphabet=st.sampled_from("ab \n\u0436\u4e2d\U0001f600"), min_size=0, max_size=3_000)


@given(TEXT, st.integers(1, 2_000), st.integers(0, 2_000))
def test_codex_raising_a_budget_never_shrinks_below_the_lower_cut_or_the_whole(text, low, extra):
    for unit in (codex_layers.TOKENS, codex_layers.BYTES):
        small, large = codex_layers.Policy(unit, low), codex_layers.Policy(unit, low + extra)
        before = len(codex_layers.formatted_truncate(text, small))
        after = len(codex_layers.formatted_truncate(text, large))
        assert after >= min(before, len(text))


@given(TEXT, st.integers(1, 2_000), st.integers(0, 2_000))
def test_gemini_raising_the_threshold_never_shrinks_below_the_lower_cut_or_the_whole(text, low, extra):
    path = "/home/u/.gemini/tmp/p/tool-outputs/session-x/run_shell_command__c.txt"
    before = js_len(gemini.format_truncated(text, path, low))
    after = js_len(gemini.format_truncated(text, path, low + extra))
    assert after >= min(before, js_len(text))


def test_a_cut_result_can_be_longer_than_the_whole_output():
    """Why the plain property is false: 40,100 chars just over Gemini's 40,000 come out longer cut."""
    text = "x" * 40_100
    cut = gemini.format_truncated(text, "/tmp/tool-outputs/session-s/run_shell_command__c.txt", 40_000)
    assert js_len(cut) > js_len(text) == js_len(gemini.format_truncated(text, "", 50_000))
    codex_cut = codex_layers.formatted_truncate("y" * 10_050, codex_layers.Policy(codex_layers.BYTES, 10_000))
    assert len(codex_cut) > 10_050


@given(st.integers(0, 5_000_000_000))
def test_claude_sizes_read_as_javascript_writes_them(size):
    text = claude_layers.size_text(size)
    kib = size / 1024
    if kib < 1:
        assert text == f"{size} bytes"
    else:
        number = float(text.rstrip("KMGB"))
        unit = {"KB": 1, "MB": 1024, "GB": 1024 * 1024}[text[-2:]]
        assert abs(number - kib / unit) <= 0.05 + 1e-9 and not text.endswith(".0" + text[-2:])


def test_claude_sizes_round_halves_up_as_to_fixed_does():
    # 1,280 bytes = 1.25 KiB: JavaScript's toFixed(1) gives "1.3" (Python's format would give "1.2")
    assert claude_layers.size_text(1_280) == "1.3KB"
    assert claude_layers.size_text(102_000) == "99.6KB" and claude_layers.size_text(2_000) == "2KB"


@given(TEXT, st.integers(1_000, 130_000), st.integers(0, 130_000), st.booleans())
def test_claude_raising_bash_output_max_chars_never_shrinks_below_the_lower_result_or_the_whole(text, low, extra,
                                                                                                  by_env):
    one = ReplayInput(0, "toolu_01", "Bash", 0, "output", text, RawOutput(text, FROM_SESSION),
                      facts={"folder": "/home/u/.claude/projects/-w/s/tool-results"})
    key = claude.READ_BACK if by_env else claude.BASH_MAX
    before = claude.replay([one], {key: low})[0]
    after = claude.replay([one], {key: low + extra})[0]
    if before.text is not None and after.text is not None:
        assert js_len(after.text) >= min(js_len(before.text), js_len(claude_layers.tool_text(text)) or 1)


def test_every_recording_is_replayed():
    assert {agent for agent, _, _ in ALL_RECORDINGS} == {"claude", "gemini", "codex"}
    assert len(ALL_RECORDINGS) == 12 + 17  # the older limit and feature recordings, and the what-if ones
