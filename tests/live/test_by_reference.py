"""`doctor.attach` reads the host's history by reference: no copy, no mutation.

The history is 200 MB of real recorded Contents with big tool outputs; the
tracemalloc peak is taken around `session.report()` only, after attach.
"""

from __future__ import annotations

import copy
import sys
import tracemalloc

import pytest

import doctor
from doctor.core.analysis import analyze_tool_result_retention
from tests.live.histories import (
    fresh,
    has_tool_result,
    recorded_contents,
    with_big_outputs,
)

HISTORY_BYTES = 200 * 1024 * 1024
PEAK_LIMIT = 2 * 1024 * 1024
OUTPUT_CHARS = 20_000


def _string_bytes(obj) -> int:
    if isinstance(obj, str):
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sum(_string_bytes(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_string_bytes(v) for v in obj)
    return 0


@pytest.fixture(scope="module")
def big_history() -> list:
    recorded = [content for content in recorded_contents() if has_tool_result(fresh(content))]
    history, size, serial = [], 0, 0
    while size < HISTORY_BYTES:
        content = with_big_outputs(fresh(recorded[serial % len(recorded)]), serial, OUTPUT_CHARS)
        history.append(content)
        size += _string_bytes(content)
        serial += 1
    return history


def _fingerprint(obj) -> list:
    """Identity, type and length of every object reachable from `obj`, in walk order."""
    out = [id(obj), type(obj).__name__]
    if isinstance(obj, dict):
        out.append(tuple(obj))
        for value in obj.values():
            out.extend(_fingerprint(value))
    elif isinstance(obj, list):
        out.append(len(obj))
        for value in obj:
            out.extend(_fingerprint(value))
    elif isinstance(obj, str):
        out.append(len(obj))
    return out


def test_report_of_200_mb_history_allocates_under_2_mb(big_history):
    session = doctor.attach(big_history)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        report = session.report()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    extra = peak - before
    print(f"tracemalloc peak during report() of {len(big_history):,} Contents: {extra / 1024:.0f} KiB")
    assert extra < PEAK_LIMIT
    assert report.qwen_stats.tool_result_count >= len(big_history)
    assert report.qwen_stats.total_chars > 100_000_000


def test_host_objects_are_unchanged_after_reports(big_history):
    identity_before = _fingerprint(big_history)
    content_before = copy.deepcopy(big_history)  # strings are shared, containers copied
    session = doctor.attach(big_history)
    session.report()
    session.report().to_json()
    assert _fingerprint(big_history) == identity_before
    assert big_history == content_before


def test_report_equals_a_fresh_analysis_of_the_same_list(big_history):
    live = doctor.attach(big_history).report()
    fresh_analysis = analyze_tool_result_retention(big_history)
    assert live.qwen_stats == fresh_analysis.stats
    assert live.retention.results == fresh_analysis.results


def test_invalidate_lets_a_report_see_a_content_edited_in_place():
    history = [fresh(content) for content in recorded_contents()]
    session = doctor.attach(history)
    before = session.report().qwen_stats
    with_big_outputs(next(c for c in history if has_tool_result(c)), 0, OUTPUT_CHARS)  # same dict, new output
    assert session.report().qwen_stats == before  # in-place edits are invisible to the incremental path
    session.invalidate()
    after = session.report().qwen_stats
    assert after == analyze_tool_result_retention(history).stats and after != before


def test_attach_applies_the_hosts_tool_budgets():
    history = [fresh(content) for content in recorded_contents()]
    default, hosted = ({s.tool: s for s in doctor.attach(history, **kwargs).report().retention.per_tool()}["read_file"]
                       for kwargs in ({}, {"tools": {"read_file": 10}}))
    assert hosted.budget.chars == 10 and hosted.oversized > default.oversized == 0
