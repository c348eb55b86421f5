"""TUI test settings: snapshots in the top-level snapshots/, pinned versions, no blink, fixed cwd.

Snapshot SVGs live in `snapshots/<test module>/<test name>.svg` at the repository root.
`--snapshot-update` is refused unless the exact versions the SVGs were made with are
installed (memray's convention), because a Textual or Rich upgrade re-renders them.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest
import pytest_textual_snapshot
from textual.widgets import Input

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT_DIR = ROOT / "snapshots"
SNAPSHOT_VERSIONS = {"textual": "8.2.8", "pytest-textual-snapshot": "1.1.0", "syrupy": "4.8.0"}


class TopLevelSVGExtension(pytest_textual_snapshot.SVGImageExtension):
    """pytest-textual-snapshot's SVG extension, storing under <repo>/snapshots/<module>/."""

    @classmethod
    def dirname(cls, *, test_location) -> str:
        return str(SNAPSHOT_DIR / test_location.basename)


# snap_compare looks the class up at call time: every snapshot goes to the top-level directory.
pytest_textual_snapshot.SVGImageExtension = TopLevelSVGExtension


def pytest_configure(config):
    if config.getoption("--snapshot-update", default=False):
        wrong = {name: version(name) for name, pinned in SNAPSHOT_VERSIONS.items() if version(name) != pinned}
        if wrong:
            pytest.exit(f"--snapshot-update needs exactly {SNAPSHOT_VERSIONS}; installed: {wrong}", returncode=2)


@pytest.fixture(autouse=True)
def _stable_tui(monkeypatch):
    """Same picture on every machine: repo-relative paths, no cursor blink, no user config."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(ROOT / "tests" / "tui" / "no-config"))
    monkeypatch.delenv("DOCTOR_KEYMAP", raising=False)
    monkeypatch.delenv("DOCTOR_THEME", raising=False)
