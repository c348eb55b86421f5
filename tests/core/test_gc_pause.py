"""Sessions are read with the cyclic garbage collector paused, and it is back on afterwards."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from doctor.core.gc_pause import cyclic_gc_paused
from doctor.sources import qwen
from doctor.sources.registry import open_session

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "qwen" / "multi-turn" / "session.jsonl"


@pytest.mark.parametrize("agent", [None, "qwen"])
def test_a_session_is_read_without_cyclic_collection(agent, monkeypatch):
    seen = []
    read = qwen.read

    def watched(path):
        seen.append(gc.isenabled())
        return read(path)

    monkeypatch.setattr(qwen, "read", watched)
    assert gc.isenabled()
    session = open_session(RECORDING, agent)
    assert seen == [False] and gc.isenabled() and session.agent == "qwen"


def test_the_collector_is_back_after_an_error_and_stays_off_if_it_was():
    with pytest.raises(ValueError), cyclic_gc_paused():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
