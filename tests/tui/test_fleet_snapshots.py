"""Snapshots of the Fleet screen (`doctor scan --tui`) at 80x24 and 200x50, on a triage database of real
recordings scanned with --paths short (paths then read the same on every machine). See test_snapshots.py
for how to update them."""

from __future__ import annotations

import dataclasses

import pytest

from doctor.cli import main
from doctor.triage.fleet import load_fleet, session_provider
from doctor.triage.store import Store
from doctor.tui.app import DoctorApp
from doctor.tui.screens.fleet import FleetScreen

from tests.tui.conftest import ROOT

RECORDINGS = ROOT / "tests" / "recordings"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    db = tmp_path_factory.mktemp("fleet") / "triage.duckdb"
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.delenv("QWEN_HOME", raising=False)
        assert main(["scan", "--db", str(db), "--jobs", "1", "-o", str(db.with_suffix(".txt")),
                     str(RECORDINGS / "qwen"), str(RECORDINGS / "codex")]) == 0
    store = Store(db, read_only=True)
    try:
        return dataclasses.replace(load_fleet(store), database="triage.duckdb")  # not the temporary folder
    finally:
        store.close()


def _app(data) -> DoctorApp:
    return DoctorApp(keymap={}, screen=FleetScreen(data, session_provider))


async def _settle(pilot) -> None:
    await pilot.pause()
    await pilot.pause()


def test_fleet_80x24(snap_compare, fleet):
    assert snap_compare(_app(fleet), terminal_size=(80, 24), run_before=_settle)


def test_fleet_filtered_sorted_80x24(snap_compare, fleet):
    async def run_before(pilot) -> None:
        await _settle(pilot)
        await pilot.press("slash", *"codex", "enter", "s", "s", "s", "s", "s")
        await _settle(pilot)

    assert snap_compare(_app(fleet), terminal_size=(80, 24), run_before=run_before)


def test_fleet_200x50(snap_compare, fleet):
    assert snap_compare(_app(fleet), terminal_size=(200, 50), run_before=_settle)
