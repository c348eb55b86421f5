"""The live tracker re-analyses only what the host appended, and falls back when it cannot."""

import json
from pathlib import Path

from doctor.core.analysis import analyze_tool_result_retention
from doctor.live.tracker import RetentionTracker
from doctor.core.result_table import qwen_retention_totals
from doctor.core.retention import totals_of
from doctor.sources.registry import open_session

RECORDINGS = Path(__file__).parents[1] / "recordings" / "qwen"


def recorded_history() -> list:
    session = open_session(RECORDINGS / "multi-turn" / "session.jsonl")
    return list(session.history())


def test_appends_are_analysed_incrementally_and_match_a_full_analysis():
    history = recorded_history()
    tracker = RetentionTracker()
    half = len(history) // 2
    live = history[:half]
    tracker.analyze(live)
    live.extend(history[half:])
    incremental = tracker.analyze(live)
    assert (tracker.full_scans, tracker.incremental_scans) == (1, 1)
    full = analyze_tool_result_retention(history)
    assert incremental.stats == full.stats
    assert [r.ordinal for r in incremental.results] == [r.ordinal for r in full.results]
    assert [r.content_index for r in incremental.results] == [r.content_index for r in full.results]


def test_replaced_or_shortened_history_falls_back_to_a_full_scan():
    history = recorded_history()
    tracker = RetentionTracker()
    tracker.analyze(history)
    shorter = history[:-3]
    assert tracker.analyze(shorter).stats == analyze_tool_result_retention(shorter).stats
    equal = list(shorter)
    equal[1] = json.loads(json.dumps(equal[1]))  # equal content, new identity: measures the same
    tracker.analyze(equal)
    assert tracker.full_scans == 2
    replaced = list(shorter)
    replaced[1] = {"role": "user", "parts": [{"text": "a different prompt"}]}
    assert tracker.analyze(replaced).stats == analyze_tool_result_retention(replaced).stats
    assert tracker.full_scans == 3


def test_fast_loop_and_rows_agree_on_real_recordings():
    for folder in sorted(p for p in RECORDINGS.iterdir() if (p / "session.jsonl").exists()):
        history = list(open_session(folder / "session.jsonl").history())
        analysis = analyze_tool_result_retention(history)
        assert totals_of(analysis.results) == qwen_retention_totals(
            history, threshold_chars=25000,
            resolve_tool_budget=lambda n: (b.chars if (b := analysis.budgets.registered_budget(n)) else None),
        ), folder.name
