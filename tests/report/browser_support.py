"""A real headless browser (Debian's chromium) for the report tests: the DOM it builds, and its screenshots' pixels."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
# CI installs chromium (.ci/run) and sets this, so a missing browser fails there instead of skipping.
REQUIRED = os.environ.get("DOCTOR_REQUIRE_REFERENCE") == "1"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    assert BROWSER, "chromium is required (DOCTOR_REQUIRE_REFERENCE=1)"
    profile = tmp_path / "profile"
    return subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "HOME": str(tmp_path)})


def page_dom(tmp_path: Path, page: Path) -> str:
    done = browser(tmp_path, "--dump-dom", page.as_uri())
    assert done.returncode == 0 and "<main>" in done.stdout, done.stderr[-2000:]
    return done.stdout


def png_pixels(png: bytes) -> list[list[bytes]]:
    """The pixels, row by row, of an 8-bit RGB/RGBA PNG (what chromium writes), filters undone."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", png[16:26])
    assert depth == 8 and colour in (2, 6)
    channels = 3 if colour == 2 else 4
    data, position = b"", 8
    while position < len(png):
        length, kind = struct.unpack(">I4s", png[position:position + 8])
        if kind == b"IDAT":
            data += png[position + 8:position + 8 + length]
        position += 12 + length
    raw, stride = zlib.decompress(data), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = row[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                row[x] = (row[x] + left) & 0xFF
            elif kind == 2:
                row[x] = (row[x] + up) & 0xFF
            elif kind == 3:
                row[x] = (row[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                row[x] = (row[x] + nearest[2]) & 0xFF
        rows.append([bytes(row[x:x + 3]) for x in range(0, stride, channels)])
        previous = row
    return rows
