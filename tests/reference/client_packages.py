"""The installed Claude Code, Gemini CLI and Codex packages (`.clients`, gitignored), read as data.

Tests use these to re-extract each client's limits from its own code, so a
version bump that changes one is noticed. Missing packages skip the tests,
unless DOCTOR_REQUIRE_REFERENCE=1 (then they fail).
"""

from __future__ import annotations

import json
import mmap
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENTS = REPO / ".clients" / "node_modules"
CLAUDE_BIN = CLIENTS / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
GEMINI_BUNDLE = CLIENTS / "@google" / "gemini-cli" / "bundle"
CODEX_BIN = CLIENTS / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex"
REQUIRED = os.environ.get("DOCTOR_REQUIRE_REFERENCE") == "1"


def require(path: Path) -> Path:
    if not path.exists():
        message = f"{path} is not installed (npm install --prefix .clients, see README)"
        if REQUIRED:
            pytest.fail(f"DOCTOR_REQUIRE_REFERENCE=1 but {message}")
        pytest.skip(message)
    return path


def package_version(package_dir: Path) -> str:
    return json.loads((require(package_dir) / "package.json").read_text())["version"]


def binary(path: Path) -> bytes:
    """The whole file as bytes (mapped, so a 400 MB binary costs no copy until read)."""
    with open(require(path), "rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)[:]


def gemini_core_source() -> str:
    """The bundle chunk holding packages/core (the one that defines the truncation threshold)."""
    for chunk in sorted(require(GEMINI_BUNDLE).glob("chunk-*.js")):
        text = chunk.read_text(encoding="utf-8")
        if "var DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD" in text and "function formatTruncatedToolOutput" in text:
            return text
    pytest.fail(f"no chunk of {GEMINI_BUNDLE} defines DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD")
