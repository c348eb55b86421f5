"""Long tool outputs kept measured give the session that keeping them whole gives (Claude Code, Codex).

The Claude Code and Codex readers keep each long tool-result text as its head and JS length and
decode it again from its line when the history is asked for (doctor/sources/measured_outputs.py).
Read with every output measured (MEASURE_FROM lowered to 1) and with none (raised past any size),
each committed recording and public fixture, and mutated copies of them, must give the same history,
analysis rows, figures, side channels, issues and meta, with the C accelerator and without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core.jsvalues import MeasuredText
from doctor.core.sentinels import CODEX_EXEC_HEADER, SENTINEL_PREFIXES
from doctor.sources import claude, codex
from doctor.sources.base import SourceError
from doctor.sources.claude import file as claude_file
from doctor.sources.codex import measured as codex_measured
from tests.hardening.mutations import EDITS
from tests.sources.differential import EXAMPLES, MODES, TRICKY_TEXT, mutated_copy, summary, use
from tests.sources.test_claude_fast import FILES as CLAUDE_FILES
from tests.sources.test_claude_fast import KEYS as CLAUDE_KEYS
from tests.sources.test_codex_hostile import FILES as CODEX_FILES
from tests.sources.test_codex_hostile import KEYS as CODEX_KEYS

READERS = {"claude": (claude, claude_file, CLAUDE_FILES, CLAUDE_KEYS),
           "codex": (codex, codex_measured, CODEX_FILES, CODEX_KEYS)}
CASES = [(agent, path) for agent, (_, _, files, _) in READERS.items() for path in files]


def _agree(agent: str, path: Path, monkeypatch, mode: str) -> None:
    reader, module, _, _ = READERS[agent]
    with monkeypatch.context() as patch:
        use(patch, mode)
        patch.setattr(module, "MEASURE_FROM", 10**12)
        whole = summary(reader, path)
        patch.setattr(module, "MEASURE_FROM", 1)
        assert summary(reader, path) == whole


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("agent, path", CASES, ids=lambda value: value if isinstance(value, str) else value.name)
def test_recordings_read_the_same_measured_and_whole(agent: str, path: Path, mode: str, monkeypatch) -> None:
    _agree(agent, path, monkeypatch, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("agent", READERS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), seed=st.integers(0, 2**32), text=TRICKY_TEXT, edits=st.lists(EDITS, max_size=2))
def test_mutated_copies_read_the_same_measured_and_whole(agent: str, data, seed: int, text: str, edits, mode: str,
                                                         monkeypatch) -> None:
    _, _, files, keys = READERS[agent]
    with mutated_copy(data.draw(st.sampled_from(files)), seed, text, edits, keys) as path:
        _agree(agent, path, monkeypatch, mode)


def _big(agent: str) -> Path:
    return next(path for path in READERS[agent][2] if "big-outputs" in str(path))


@pytest.mark.parametrize("agent", READERS)
def test_long_outputs_are_kept_measured_in_what_the_analysis_reads(agent: str) -> None:
    """The wiring: a big-outputs recording's long results are MeasuredText in the measured history,
    whole text in the history."""
    reader, module, _, _ = READERS[agent]
    session = reader.read(_big(agent))

    def results(history):
        return [next(iter(part["functionResponse"]["response"].values())) for content in history
                for part in content["parts"] if "functionResponse" in part]

    def measurable(text: str) -> bool:  # long, and no header to parse (Codex's own is read from its head)
        headed = text.startswith(SENTINEL_PREFIXES) and not (agent == "codex" and text.startswith(CODEX_EXEC_HEADER))
        return len(text) >= module.MEASURE_FROM and not headed

    kept, whole = results(session.history_to_measure()), results(session.history())
    long = [index for index, text in enumerate(whole) if measurable(text)]
    assert long and all(type(kept[index]) is MeasuredText and type(whole[index]) is str for index in long)


@pytest.mark.parametrize("agent", READERS)
def test_a_file_changed_after_it_was_read_is_said_so(agent: str, tmp_path: Path) -> None:
    reader = READERS[agent][0]
    copy = tmp_path / _big(agent).name
    copy.write_bytes(_big(agent).read_bytes())
    session = reader.read(copy)
    copy.write_bytes(_big(agent).read_bytes().replace(b"1", b"2"))
    with pytest.raises(SourceError, match="changed since it was read"):
        list(session.history())
