"""Properties of the Qwen replay, drawn by Hypothesis over the real recordings and many settings.

- Under the session's own settings, however they are spelled (a key restated at the value it has, or
  a key left unset restated as `default`), the replay is the identity: every result known, every text
  exactly the recorded one.
- "Raising a limit never shrinks a result" is not what Qwen does, and Hypothesis showed it three ways
  (thresholds of 5,000 or more, batch budget off): a glob of 150 long paths listed 20 at a time is
  truncated to 10,040 chars, listed 100 at a time it passes the persistence gate and the model gets a
  2,455-char stub; a 98k web page persisted under threshold 5,000 leaves a stub of over 25 lines, which
  `truncateToolOutputLines` 25 then cuts to 1,511 chars, while with no threshold the page's own 25 lines
  make 1,426; more grep matches reaching the same 20,000-char cut give 20,478 chars instead of 20,480
  (the whole-line head/tail split lands elsewhere). What holds, and is tested: a result the model got
  whole stays whole when the threshold or the line cap is raised, and is then no smaller; raising the
  batch budget alone never shrinks any result.
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
from doctor.core.budgets import canonical_tool_name
from doctor.whatif.qwen import capped_by
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


def whole(whatif) -> set[str]:
    """Results the model got whole: no layer cut them and the tool did not cap itself (paging, match caps)."""
    return {site.call_id for site, o in zip(whatif.sites, whatif.outcomes)
            if o.layer == "none" and o.text is not None and capped_by(canonical_tool_name(site.tool), o.text) is None}


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
def test_raising_the_threshold_or_the_line_cap_never_cuts_what_was_whole(variant, threshold, lines, key, by):
    """A result kept whole stays whole when a limit is raised, and a result whole under the raised limit is no
    smaller than before. (Not "no result ever shrinks": two results cut the same way differ by where their
    lines end — 20,480 → 20,478 chars for grep when more matches reach the same 20,000-char cut — and the
    gate's stub is smaller than a truncation; see the module docstring.)"""
    low = {THRESHOLD: threshold, LINES: lines, BATCH: -1}
    high = {**low, key: _raised(low[key], by)}
    lowered, raised = prepared(variant).replay(low), prepared(variant).replay(high)
    before, after = sizes(lowered), sizes(raised)
    whole_before, whole_after = whole(lowered), whole(raised)
    for call_id, chars in before.items():
        if chars is None or after[call_id] is None:
            continue
        if call_id in whole_before:
            assert call_id in whole_after, (variant, low, high, call_id)
        if call_id in whole_after and call_id not in stubs(lowered):
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
