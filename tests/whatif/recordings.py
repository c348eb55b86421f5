"""The qwen-whatif recordings (one scripted session, seven settings), unpacked once per test run.

What a test may compare with: `expected.json` (Qwen's own /doctor memory answer), `requests.json` (what
reached the scripted model, per call id), `last-request.json.gz` (the last request's tool messages, whole).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tarfile
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "recordings" / "qwen-whatif"
VARIANTS = ("default", "threshold-10000", "threshold-50000", "threshold-100000", "threshold-off", "lines-200",
            "batch-60000")
KEYS = ("truncateToolOutputThreshold", "truncateToolOutputLines", "toolOutputBatchBudget")


def settings(variant: str) -> dict:
    path = HERE / variant / "settings.json"
    return json.loads(path.read_text())["tools"] if path.exists() else {}


def unpack(variant: str, into: Path) -> Path:
    """`session.jsonl` and `tmp/` of a variant under `into/<variant>/`; the session file's path."""
    folder = into / variant
    if not folder.exists():
        with tarfile.open(HERE / variant / "recording.tar.gz") as tar:
            tar.extractall(folder, filter="data")
    return folder / "session.jsonl"


def set_args(a: str, b: str) -> list[str]:
    """`doctor whatif` arguments that replay A's session under B's settings (A's own read with --settings)."""
    args = ["--settings", str(HERE / a / "settings.json")] if (HERE / a / "settings.json").exists() else []
    mine, theirs = settings(a), settings(b)
    for key in KEYS:
        if key in theirs:
            args += ["--set", f"tools.{key}={theirs[key]}"]
        elif key in mine:
            args += ["--set", f"tools.{key}=default"]
    return args


def expected(variant: str) -> dict:
    return json.loads((HERE / variant / "expected.json").read_text())["toolResultRetention"]


@cache
def received_chars(variant: str) -> dict[str, int]:
    """call id -> JS length of the tool message the model got (the last request carries every result)."""
    requests = json.loads((HERE / variant / "requests.json").read_text())
    return {m["toolCallId"]: m["chars"] for m in requests[-1]["toolMessages"]}


@cache
def received_texts(variant: str) -> dict[str, str]:
    body = json.loads(gzip.decompress((HERE / variant / "last-request.json.gz").read_bytes()))

    def text(content) -> str:  # a string, or content parts whose text parts were sent joined
        return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)

    return {m["tool_call_id"]: text(m["content"]) for m in body["messages"] if m.get("role") == "tool"}


def kept_lines(session: Path) -> set[str]:
    """Every line of text a recording keeps anywhere: the session file (JSON-decoded) and its spill files."""
    lines: set[str] = set()

    def add(value) -> None:
        if isinstance(value, str):
            lines.update(value.split("\n"))
        elif isinstance(value, dict):
            for item in value.values():
                add(item)
        elif isinstance(value, list):
            for item in value:
                add(item)

    for raw in session.read_bytes().splitlines():
        add(json.loads(raw))
    for spill in (session.parent / "tmp").rglob("*"):
        if spill.is_file():
            lines.update(spill.read_text(encoding="utf-8", errors="replace").split("\n"))
    return lines


def doctor(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "doctor", *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300)
