"""doctor's CLI as a subprocess that reports its own peak resident set: how the hostile-input tests show
that a stranger's file costs bounded memory (tests/security/test_giant_lines.py, test_detection_lines.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Runs doctor's CLI in a fresh interpreter and writes its own peak resident set (VmHWM, KiB) at exit.
RUN = """import atexit, os, sys
def peak():
    with open('/proc/self/status') as status, open(os.environ['DOCTOR_TEST_PEAK'], 'w') as out:
        out.write(next(line for line in status if line.startswith('VmHWM')).split()[1])
atexit.register(peak)
from doctor.cli import main
sys.exit(main(sys.argv[1:]))
"""


def doctor_with_peak(tmp_path: Path, *args: str, stdin: bytes = b"") -> tuple[subprocess.CompletedProcess, int]:
    """(the run, its peak RSS in bytes)."""
    peak = tmp_path / "peak"
    env = {**os.environ, "DOCTOR_TEST_PEAK": str(peak), "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", RUN, *args], input=stdin, capture_output=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert b"Traceback" not in done.stderr, done.stderr.decode()[-2000:]
    return done, int(peak.read_text()) * 1024
