"""A Codex rollout's long outputs kept measured give the session that keeping them whole gives.

The reader keeps each long `function_call_output` text as its head and JS length and decodes it again
from its line when the history is asked for (doctor/sources/codex/measured.py). Read with every output
measured (MEASURE_FROM lowered to 1) and with none (raised past any size), each committed Codex
recording and public fixture, and mutated copies of them, must give the same history, analysis rows,
figures, side channels, issues and meta, with the C accelerator and without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core.jsvalues import MeasuredText
from doctor.sources import codex
from doctor.sources.base import SourceError
from doctor.sources.codex import measured
from tests.hardening.mutations import EDITS
from tests.sources.differential import EXAMPLES, MODES, TRICKY_TEXT, mutated_copy, summary, use
from tests.sources.test_codex_hostile import FILES, KEYS

BIG = next(path for path in FILES if "big-outputs" in str(path))


def _agree(path: Path, monkeypatch, mode: str) -> None:
    with monkeypatch.context() as patch:
        use(patch, mode)
        patch.setattr(measured, "MEASURE_FROM", 10**12)
        whole = summary(codex, path)
        patch.setattr(measured, "MEASURE_FROM", 1)
        assert summary(codex, path) == whole


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_read_the_same_measured_and_whole(path: Path, mode: str, monkeypatch) -> None:
    _agree(path, monkeypatch, mode)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(FILES), seed=st.integers(0, 2**32), text=TRICKY_TEXT, edits=st.lists(EDITS, max_size=2))
def test_mutated_copies_read_the_same_measured_and_whole(source: Path, seed: int, text: str, edits, mode: str,
                                                         monkeypatch) -> None:
    with mutated_copy(source, seed, text, edits, KEYS) as path:
        _agree(path, monkeypatch, mode)


def test_long_outputs_are_kept_measured_in_what_the_analysis_reads():
    """The wiring: the big-outputs recording's long outputs are MeasuredText in the measured history,
    whole text in the history."""
    session = codex.read(BIG)
    kept = [part["functionResponse"]["response"].get("output") for content in session.history_to_measure()
            for part in content["parts"] if "functionResponse" in part]
    whole = [part["functionResponse"]["response"].get("output") for content in session.history()
             for part in content["parts"] if "functionResponse" in part]
    long = [index for index, text in enumerate(whole) if len(text) >= measured.MEASURE_FROM]
    assert long and all(type(kept[index]) is MeasuredText and type(whole[index]) is str for index in long)


def test_a_file_changed_after_it_was_read_is_said_so(tmp_path):
    copy = tmp_path / BIG.name
    copy.write_bytes(BIG.read_bytes())
    session = codex.read(copy)
    copy.write_bytes(BIG.read_bytes().replace(b"a", b"b"))
    with pytest.raises(SourceError, match="changed since it was read"):
        list(session.history())
