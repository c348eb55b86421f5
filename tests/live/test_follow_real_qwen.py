"""`doctor memory --follow` tracks a recording a real Qwen Code 0.24.4 run is writing.

Drives `examples/follow_real_qwen.py`: the client against a scripted fake model,
two followers started with no PATH in its work directory, and Qwen's own
`/doctor memory --json` as the expected final numbers. Skips without Node,
the bundle or the scripted model server (fails instead under DOCTOR_REQUIRE_REFERENCE=1).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import REQUIRE_REFERENCE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import follow_real_qwen

UNAVAILABLE = follow_real_qwen.missing()
pytestmark = [pytest.mark.node, pytest.mark.slow, pytest.mark.ci]
if UNAVAILABLE and not REQUIRE_REFERENCE:
    pytestmark.append(pytest.mark.skip(reason=UNAVAILABLE))


def test_follow_tracks_a_real_qwen_recording(tmp_path):
    lines = follow_real_qwen.check(follow_real_qwen.run(tmp_path))
    print("\n".join(lines))
