"""A host thread appends to its history while doctor reports on it.

No report may raise, and each must describe some prefix `history[:k]` exactly:
its counters equal those of a fresh analysis of that prefix. Every appended
Content carries a tool result, so the counters grow with `k` and identify it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import doctor
from doctor import slash
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.retention import RetentionTotals, totals_of
from tests.live.histories import (
    fresh,
    has_tool_result,
    recorded_contents,
    with_big_outputs,
)

APPENDS = 3_000

T = TypeVar("T")


def _key(stats) -> tuple:
    return (stats.tool_result_count, stats.total_chars, stats.largest_result_chars, stats.oversized_result_count)


def _prefix_keys(history: list) -> dict[tuple, int]:
    """Counters of `history[:k]` for every k, mapped back to k (summed from one full analysis)."""
    by_content: dict[int, list] = {}
    for result in analyze_tool_result_retention(history).results:
        by_content.setdefault(result.content_index, []).append(result)
    keys, totals = {(0, 0, 0, 0): 0}, RetentionTotals()
    for k in range(1, len(history) + 1):
        totals = totals + totals_of(by_content.get(k - 1, ()))
        keys[(totals.tool_result_count, totals.total_chars, totals.largest_result_chars,
              totals.oversized_result_count)] = k
    return keys


def _host_appends(history: list, started: threading.Event) -> None:
    recorded = [content for content in recorded_contents() if has_tool_result(content)]
    started.set()
    for serial in range(APPENDS):
        history.append(with_big_outputs(fresh(recorded[serial % len(recorded)]), serial, 500 + serial))


def _while_host_appends(history: list, call: Callable[[], T]) -> list[T]:
    """Call `call` over and over while a host thread appends to `history`, from its first append to its last."""
    started = threading.Event()
    host = threading.Thread(target=_host_appends, args=(history, started))
    host.start()
    started.wait()
    results = []
    while host.is_alive():
        results.append(call())
    host.join()
    return results


def test_reports_during_appends_each_match_a_prefix():
    history: list = []
    session = doctor.attach(history)
    reports = _while_host_appends(history, session.report)
    reports.append(session.report())

    keys = _prefix_keys(history)
    prefixes = [keys[_key(report.qwen_stats)] for report in reports]  # KeyError: not a prefix
    assert prefixes == sorted(prefixes), "a later report saw a shorter prefix"
    assert prefixes[-1] == len(history)
    assert len({k for k in prefixes if 0 < k < len(history)}) >= 2, "the reader never overlapped the writer"
    # Every report names a prefix (above); rows are compared in full on an even sample of them,
    # since a fast refresh yields hundreds of reports and each comparison re-analyses history[:k].
    step = max(1, len(reports) // 25)
    for report, k in list(zip(reports, prefixes, strict=True))[::step] + [(reports[-1], prefixes[-1])]:
        fresh_analysis = analyze_tool_result_retention(history[:k])
        assert report.qwen_stats == fresh_analysis.stats
        assert report.retention.results == fresh_analysis.results


def test_slash_command_during_appends():
    history: list = []
    session = doctor.attach(history)
    results = _while_host_appends(history, lambda: slash.handle("/doctor memory --json", session))
    assert results and all(result.kind in ("info", "warning") for result in results)
