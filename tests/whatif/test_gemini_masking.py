"""Gemini CLI's output masking, replayed from sums, against the CLI's own walk.

`ToolOutputMaskingService.mask` walks the history from the newest function response back before every
request. doctor replays it from prefix sums (doctor/whatif/gemini_masking.py `_passes`: requests × results
estimates cost minutes on one long session); `cli_walk` below is the walk as the CLI writes it, request by
request, and both must mask, keep and leave undecided the same results on any history: sizes across the
thresholds, results of unknown size, exempt tools, error slots, results of one request and parallel calls.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.core.sentinels import NONE
from doctor.whatif import gemini_masking as masking
from doctor.whatif.model import FROM_SESSION, Outcome, RawOutput, ReplayInput, unknown


def cli_walk(inputs, texts, config):
    """(masked, undecided) per result: before each request, newest first, as Gemini CLI 0.61.0 does it."""
    masked, undecided = [False] * len(inputs), [False] * len(inputs)
    for pending in sorted({one.facts["content_index"] for one in inputs}):
        last = pending - 2 if config.protect_latest else pending - 1
        scanned = [i for i, one in enumerate(inputs) if one.facts["content_index"] <= last]
        cumulative, boundary, prunable = 0, False, []
        for i in reversed(scanned):
            one = inputs[i]
            if one.tool in masking.EXEMPT_TOOLS or masked[i] or one.field != "output":
                continue
            if texts[i] is None:
                undecided[i] = True
                for j in scanned:
                    undecided[j] = undecided[j] or (j < i and not masked[j])
                break
            tokens = math.floor(masking.estimate(one.tool, texts[i]))
            cumulative += tokens
            boundary = boundary or cumulative > config.protection
            if boundary:
                prunable.append((i, tokens))
        else:
            if sum(tokens for _, tokens in prunable) >= config.min_prunable:
                for i, tokens in prunable:
                    sizes = [math.floor(masking.estimate(inputs[i].tool, masking.snippet(inputs[i].tool, texts[i],
                                                                                           inputs[i], suffix)))
                             for suffix in masking.RANDOM_SUFFIX]
                    masked[i] = tokens - sizes[1] > 0
                    undecided[i] = undecided[i] or (not masked[i] and tokens - sizes[0] > 0)
    return masked, undecided


RESULT = st.tuples(
    st.sampled_from(["run_shell_command", "read_file", "ask_user", "mcp_docs_search"]),
    st.sampled_from(["output", "output", "output", "error"]),
    st.one_of(st.integers(0, 4000), st.integers(560, 720)),  # chars: small, worth masking, or about the notice's size
    st.integers(0, 24),  # 0: the recording does not keep it (its size is unknown)
    st.integers(0, 2),  # content indices it moves on by: 0 is a parallel call of the same request
)


@settings(max_examples=500, deadline=None)
@given(st.lists(RESULT, min_size=1, max_size=40), st.integers(-1, 3_000), st.integers(0, 2_000), st.booleans())
def test_the_replayed_masking_is_the_clis_walk(results, protection, min_prunable, protect_latest):
    inputs, outcomes, index = [], [], 0
    for ordinal, (tool, slot, size, kept, step) in enumerate(results):
        index += step
        text = None if not kept else ("line\n" * (size // 5 + 1) if ordinal % 2 else "x" * size)
        facts = {"content_index": index, "folder": "/t", "session_id": "s"}
        inputs.append(ReplayInput(ordinal, f"call{ordinal}", tool, ordinal, slot, text or "", RawOutput(text, FROM_SESSION),
                                  facts=facts))
        outcomes.append(Outcome(text, NONE) if text is not None else unknown("not kept"))
    config = masking.Config(protection, min_prunable, protect_latest)
    expected = cli_walk(inputs, [o.text for o in outcomes], config)
    assert masking.mask_decisions(inputs, [o.text for o in outcomes], config) == expected
