"""Claude Code's persisted-output stubs and where their spill files are.

Claude Code (2.1.2+) replaces a big tool result with a `<persisted-output>`
stub naming an absolute path under `<project>/<session id>/tool-results/`; MCP
results use `Error: result (N characters) exceeds maximum allowed tokens. Output
has been saved to <path>.`. The path is absolute on the recording machine, so a
copied session is resolved by file name against the spill root beside the file.
Subagent files share their parent session's spill root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from doctor.core.jsvalues import js_len
from doctor.core.sentinels import HEAD_CHARS, PERSISTED_OUTPUT_OPEN_TAG

MCP_SAVED_PREFIX = "Error: result ("
_SAVED_TO = re.compile(r"(?:Full output saved to|Output has been saved to):?\s*(\S+)")


def is_persisted_stub(text: str) -> bool:
    return text.startswith(PERSISTED_OUTPUT_OPEN_TAG) or (
        text.startswith(MCP_SAVED_PREFIX) and "Output has been saved to" in text[:HEAD_CHARS])


def stub_path(text: str) -> str | None:
    """The spill path a stub names (a trailing sentence dot stripped), or None."""
    match = _SAVED_TO.search(text[:HEAD_CHARS])
    return match.group(1).rstrip(".") if match else None


def spill_roots(session_file: Path) -> list[Path]:
    """`<session id>/tool-results/` for a main file; the parent's for a subagent file."""
    if session_file.parent.name == "subagents":
        root = session_file.parent.parent / "tool-results"
    else:
        root = session_file.with_suffix("") / "tool-results"
    return [root] if root.is_dir() else []


def persisted_output(tool_use_id: str | None, tool: str, text: str, roots: list[Path]) -> dict:
    """One row of `meta["persisted_outputs"]`: the stub, the path it names, the file found."""
    path = stub_path(text)
    local = _local_copy(path, roots) if path else None
    return {
        "tool_use_id": tool_use_id,
        "tool": tool,
        "stub_chars": js_len(text),
        "path": path,
        "local_path": str(local) if local else None,
        "local_bytes": local.stat().st_size if local else None,
    }


def _local_copy(path: str, roots: list[Path]) -> Path | None:
    """The copy beside the session first (it belongs to this file), then the path as named.

    The named path is tested as a string (a Path only for a file found: a session holds a stub per
    persisted output, mostly of another machine); less its trailing slashes, as Path would test it."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    for root in roots:
        candidate = root / name
        if candidate.is_file():
            return candidate
    return Path(path) if os.path.isfile(path.rstrip("/")) else None
