"""Properties of the Qwen replay, drawn by Hypothesis over the real recordings and many settings.

- Under the session's own settings, however they are spelled (a key restated at the value it has, or
  a key left unset restated as `default`), the replay is the identity: every result known, every text
  exactly the recorded one.
- Raising a limit never shrinks a result, where Qwen's own arithmetic allows the claim: among explicit
  thresholds of 5,000 or more (below that, a persisted stub with its 2,000-char preview can be longer
  than a truncated result), with the batch budget off (with it on, a result that grows takes budget
  from its neighbours), and raising the batch budget alone never shrinks one. Even so, a result that
  grows past the persistence gate (threshold + 3,000) becomes a ~2,400-char stub: Hypothesis found it
  at once (glob of 150 long paths: 20 listed under `truncateToolOutputLines` 20 are truncated to 10,040
  chars; with no line cap all 100 are listed, over the gate, and the model gets a 2,455-char stub).
  It found a second one: with `truncateToolOutputLines` 25 and threshold 5,000 a 98k web page is persisted
  and the stub itself (over 25 lines) is then truncated by lines to 1,511 chars; with no threshold the
  page is not persisted and its own 25 lines make 1,426 chars. So the claim is "never shrinks, unless the
  persistence gate is involved on either side".
- Setting the threshold at all is not "raising" it: Qwen's shell budget is 30,000 until the key is set,
  then it is the threshold, so `--set tools.truncateToolOutputThreshold=25000` (the default value)
  shrinks a 29,000-char shell result. The replay must show that, not smooth it over.
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.assemble import ReportOptions
from doctor.core.budgets import DEFAULT_TOOL_OUTPUT_BATCH_BUDGET, DEFAULT_TRUNCATE_TOOL_OUTPUT_LINES
from doctor.sources.registry import open_session
from doctor.whatif.replay import prepare
from tests.whatif.recordings import HERE, VARIANTS, settings as recorded_settings, unpack

THRESHOLD, LINES, BATCH = "tools.truncateToolOutputThreshold", "tools.truncateToolOutputLines", "tools.toolOutputBatchBudget"
_ROOT = Path(tempfile.mkdtemp(prefix="doctor-whatif-"))


@cache
def prepared(variant: str):
    options = ReportOptions(settings_files=tuple(p for p in [HERE / variant / "settings.json"] if p.exists()),
                            use_default_settings_files=False)
    return prepare(open_session(unpack(variant, _ROOT)), options)


def sizes(whatif) -> dict[str, int | None]:
    return {site.call_id: (None if o.text is None else len(o.text.encode("utf-16-le")) // 2)
            for site, o in zip(whatif.sites, whatif.outcomes)}


def stubs(whatif) -> set[str]:
    """Results the persistence gate touched (a stub, or a stub truncated further)."""
    return {site.call_id for site, o in zip(whatif.sites, whatif.outcomes)
            if o.text is not None and "<persisted-output>" in o.text[:4096]}


@settings(max_examples=40)
@given(variant=st.sampled_from(VARIANTS), restate=st.sets(st.sampled_from((THRESHOLD, LINES, BATCH))))
def test_the_sessions_own_settings_in_any_spelling_replay_to_the_recorded_texts(variant, restate):
    own = {f"tools.{key}": value for key, value in recorded_settings(variant).items()}
    overrides = {}
    for key in restate:
        if key in own:
            overrides[key] = own[key]
        elif key == LINES:
            overrides[key] = DEFAULT_TRUNCATE_TOOL_OUTPUT_LINES  # same as unset
        elif key == BATCH:
            overrides[key] = DEFAULT_TOOL_OUTPUT_BATCH_BUDGET
        else:
            overrides[key] = None  # `default`: it is not set, and stays so
    whatif = prepared(variant).replay(overrides)
    for site, outcome in zip(whatif.sites, whatif.outcomes):
        assert outcome.text == site.recorded, (variant, overrides, site.call_id, outcome.why)


limits = st.one_of(st.integers(5_000, 150_000), st.just(-1))
line_caps = st.one_of(st.integers(20, 3_000), st.just(-1))


def _raised(value: int, by: int) -> int:
    return -1 if value == -1 or by == -1 else value + by


@settings(max_examples=60)
@given(variant=st.sampled_from(VARIANTS), threshold=limits, lines=line_caps,
       key=st.sampled_from((THRESHOLD, LINES)), by=st.one_of(st.integers(1, 50_000), st.just(-1)))
def test_raising_the_threshold_or_the_line_cap_never_shrinks_a_result(variant, threshold, lines, key, by):
    low = {THRESHOLD: threshold, LINES: lines, BATCH: -1}
    high = {**low, key: _raised(low[key], by)}
    lowered, raised = prepared(variant).replay(low), prepared(variant).replay(high)
    before, after = sizes(lowered), sizes(raised)
    gated = stubs(lowered) | stubs(raised)
    for call_id, chars in before.items():
        if chars is not None and after[call_id] is not None and call_id not in gated:
            assert after[call_id] >= chars, (variant, low, high, call_id)


@settings(max_examples=60)
@given(variant=st.sampled_from(VARIANTS), threshold=st.one_of(st.none(), limits), budget=st.integers(1_000, 400_000),
       by=st.one_of(st.integers(1, 200_000), st.just(-1)))
def test_raising_the_batch_budget_never_shrinks_a_result(variant, threshold, budget, by):
    low = {BATCH: budget} if threshold is None else {THRESHOLD: threshold, BATCH: budget}
    high = {**low, BATCH: _raised(budget, by)}
    before, after = sizes(prepared(variant).replay(low)), sizes(prepared(variant).replay(high))
    for call_id, chars in before.items():
        if chars is not None and after[call_id] is not None:
            assert after[call_id] >= chars, (variant, low, high, call_id)


def test_setting_the_threshold_to_its_default_value_shrinks_large_shell_results():
    unset = sizes(prepared("threshold-off").replay({THRESHOLD: None, BATCH: -1}))
    set_to_default = sizes(prepared("threshold-off").replay({THRESHOLD: 25_000, BATCH: -1}))
    shell = "call_b09_shell_w107"  # 29,160 chars of output: under the 30,000 the shell has while the key is unset
    assert 29_160 < unset[shell] < 30_000
    assert set_to_default[shell] < 5_000  # cut to the shell's 4,000-char preview once the key is set
