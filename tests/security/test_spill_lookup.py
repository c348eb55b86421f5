"""What a stranger's folder can put where the spill lookup looks, now that a lookup remembers, per audit, which
directories it found (doctor/spill/resolve.py, docs/security.md "Spill audit shortcuts").

A copy of a real Qwen recording with two spill files, one in `tmp/tool-results/` and one in `tmp/`, has its
`tool-results` directory replaced by a symlink to a directory outside the session's folders, by a FIFO, or by
a symlink loop. Through `doctor memory --json` as a subprocess: the linked file is found but outside the
roots and never opened, the FIFO and the loop are simply missing (no hang, no traceback), and the other
spill file is still measured in full.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.spill.recording_copies import qwen_copy

from .peak_support import doctor_with_peak


def _link_outside(directory: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(directory, elsewhere / directory.name)
    directory.symlink_to(elsewhere / directory.name)


def _fifo(directory: Path, tmp_path: Path) -> None:
    shutil.rmtree(directory)
    os.mkfifo(directory)


def _loop(directory: Path, tmp_path: Path) -> None:
    shutil.rmtree(directory)
    directory.symlink_to(directory)


@pytest.mark.parametrize("plant, kind", [(_link_outside, "outside-root"), (_fifo, "missing"), (_loop, "missing")],
                         ids=["link-outside", "fifo", "loop"])
def test_what_replaces_a_spill_directory_is_reported_never_opened(tmp_path, plant, kind):
    gate = qwen_copy("persist-gate", tmp_path)
    [grep_file] = (gate / "tmp").glob("grep_search_*.output")
    plant(gate / "tmp" / "tool-results", tmp_path)
    done, _ = doctor_with_peak(tmp_path, "memory", "--json", str(gate / "session.jsonl"))
    spill = json.loads(done.stdout)["spill"]
    persisted, truncated = spill["pointers"]
    assert [finding["kind"] for finding in spill["findings"]] == [kind]
    assert persisted["file"] is None  # never opened
    if kind == "outside-root":
        assert persisted["resolution"]["inside"] is False and "(not opened)" in spill["findings"][0]["message"]
    assert truncated["resolution"]["inside"] is True
    assert truncated["file"]["bytes"] == grep_file.stat().st_size
