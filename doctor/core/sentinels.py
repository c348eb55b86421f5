"""Recognise which layer bounded a tool result, from the text the model kept.

Agents leave a recognisable header when they cut a result: Qwen's in-tool
truncation (`Tool output was too large and has been truncated.`), its
persistence gate (`<persisted-output>` stub), its batch budget (`Tool output
truncated.`), microcompaction's `[Old tool result content cleared]`, and the
other agents' spill notices. Only the head of a result is ever inspected, so a
100 MB output costs the same as a short one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOOL_OUTPUT_TRUNCATED_PREFIX = "Tool output was too large and has been truncated"
PERSISTED_OUTPUT_OPEN_TAG = "<persisted-output>"
BATCH_TRUNCATED_PREFIX = "Tool output truncated."
OUTPUT_TOO_LARGE_PREFIX = "Output too large ("
MICROCOMPACT_CLEARED = "[Old tool result content cleared]"
GEMINI_TRUNCATED_PREFIX = "Output too large. Showing"

# Sentinel kinds, named after the layer that bounded the result.
NONE = "none"
IN_TOOL_TRUNCATION = "in-tool truncation"
PERSISTED_STUB = "persistence gate"
PERSISTED_UNSAVED = "persistence gate (not saved)"
BATCH_OFFLOAD = "batch budget"
MICROCOMPACTED = "microcompaction"

LAYERS = (NONE, IN_TOOL_TRUNCATION, PERSISTED_STUB, PERSISTED_UNSAVED, BATCH_OFFLOAD, MICROCOMPACTED)

# The head inspected for pointers: room for the header lines with very long paths.
HEAD_CHARS = 8192

_SENTINEL_PREFIXES = (
    TOOL_OUTPUT_TRUNCATED_PREFIX,
    PERSISTED_OUTPUT_OPEN_TAG,
    BATCH_TRUNCATED_PREFIX,
    OUTPUT_TOO_LARGE_PREFIX,
    MICROCOMPACT_CLEARED,
    GEMINI_TRUNCATED_PREFIX,
)


def starts_already_truncated(raw: object) -> bool:
    """Qwen's analyzer skip rule: starts with the truncation prefix or `<persisted-output>`."""
    return isinstance(raw, str) and raw.startswith((TOOL_OUTPUT_TRUNCATED_PREFIX, PERSISTED_OUTPUT_OPEN_TAG))


def sentinel_kind(raw: object) -> str:
    """Which layer bounded this result text (NONE when it was kept whole)."""
    if not isinstance(raw, str) or not raw.startswith(_SENTINEL_PREFIXES):
        return NONE
    if raw.startswith(TOOL_OUTPUT_TRUNCATED_PREFIX) or raw.startswith(GEMINI_TRUNCATED_PREFIX):
        return IN_TOOL_TRUNCATION
    if raw.startswith(PERSISTED_OUTPUT_OPEN_TAG):
        return PERSISTED_STUB
    if raw.startswith(BATCH_TRUNCATED_PREFIX):
        return BATCH_OFFLOAD
    if raw.startswith(MICROCOMPACT_CLEARED):
        return MICROCOMPACTED
    return PERSISTED_UNSAVED


@dataclass(frozen=True, slots=True)
class StubInfo:
    """What a sentinel header says about the full output."""

    paths: tuple[str, ...] = ()
    sha256: str | None = None
    declared_kb: int | None = None
    declared_chars: int | None = None
    declared_lines: int | None = None
    note: str | None = None

    @property
    def path(self) -> str | None:
        return self.paths[0] if self.paths else None


_SAVED_TO = re.compile(
    r"^(?:The full output has been saved to|Output too large \(\d+ KB\)\. Full output saved to|"
    r"Full output saved to|For full output see): (.+?)\s*$",
    re.MULTILINE,
)
_GEMINI_SEE = re.compile(r"For full output see: (\S.*?)\s*$", re.MULTILINE)
_DIGEST = re.compile(r"^Full output sha256: ([0-9a-f]{64})(?:\r?$)", re.MULTILINE)
_KB = re.compile(r"Output too large \((\d+) KB\)")
_TOTALS = re.compile(r"^Total characters: (\d+); total lines: (\d+)\.", re.MULTILINE)
_UNSAVED_NOTE = re.compile(r"^Output too large \(\d+ KB\)\. (\([^)\n]*\))", re.MULTILINE)
_ARTIFACT_ONE = re.compile(r"^Tool output truncated\. Persisted tool-output artifact: (.+?)\s*$", re.MULTILINE)
_ARTIFACT_LIST_ITEM = re.compile(r"^- (/.+?)\s*$", re.MULTILINE)


def parse_stub(raw: str) -> StubInfo | None:
    """Pointer, digest and totals from a sentinel header; None for plain results."""
    kind = sentinel_kind(raw)
    if kind in (NONE, MICROCOMPACTED):
        return None
    head = raw[:HEAD_CHARS]
    if kind == BATCH_OFFLOAD:
        paths = _batch_artifact_paths(head)
    else:
        paths = _first_saved_path(head)
    digest = _DIGEST.search(head)
    kb = _KB.search(head)
    totals = _TOTALS.search(head)
    note = _UNSAVED_NOTE.search(head)
    return StubInfo(
        paths=paths,
        sha256=digest.group(1) if digest else None,
        declared_kb=int(kb.group(1)) if kb else None,
        declared_chars=int(totals.group(1)) if totals else None,
        declared_lines=int(totals.group(2)) if totals else None,
        note=note.group(1) if note and not paths else None,
    )


def _first_saved_path(head: str) -> tuple[str, ...]:
    match = _SAVED_TO.search(head) or _GEMINI_SEE.search(head)
    return (match.group(1),) if match else ()


def _batch_artifact_paths(head: str) -> tuple[str, ...]:
    one = _ARTIFACT_ONE.search(head)
    if one:
        return (one.group(1),)
    header_end = head.find("\n\n")
    header = head if header_end < 0 else head[:header_end]
    if "Persisted tool-output artifacts:" not in header:
        return ()
    return tuple(m.group(1) for m in _ARTIFACT_LIST_ITEM.finditer(header))
