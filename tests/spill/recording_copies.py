"""A copy of a real Qwen recording for a test to damage: what the spill tests and the hostile spill-lookup
tests start from."""

from __future__ import annotations

import shutil
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"


def qwen_copy(scenario: str, tmp_path: Path) -> Path:
    """The recording's folder copied under `tmp_path`, its spill files with Qwen's own 0600 modes (git
    checkouts give 0644) and its recorded spill paths pointing nowhere on this machine (the recorder's
    /tmp/qrec may exist here), so only the copy can be found."""
    target = tmp_path / scenario
    shutil.copytree(RECORDINGS / "qwen" / scenario, target)
    for path in (target / "tmp").rglob("*"):
        if path.is_file():
            path.chmod(0o600)
    session = target / "session.jsonl"
    session.write_text(session.read_text(encoding="utf-8").replace("/home/.qwen/tmp/", "/gone/.qwen/tmp/"),
                       encoding="utf-8")
    return target
