"""Recognise which layer bounded a tool result, from the text the model kept.

Agents leave a recognisable header when they cut a result: Qwen's in-tool
truncation (`Tool output was too large and has been truncated.`), its
persistence gate (`<persisted-output>` stub), its batch budget (`Tool output
truncated.`), microcompaction's `[Old tool result content cleared]`, and the
other agents' spill notices (Claude's `<persisted-output>` and MCP "Output has
been saved to", Gemini's "For full output see" and `<tool_output_masked>`), Codex's
in-place cut (`Warning: truncated output` under its exec header); AutoBot's anchors
are found by `doctor.sources.autobot`. Only the head of a result is ever inspected (plus a
short tail for Gemini's masking notice, which puts its pointer last), so a
100 MB output costs the same as a short one.
"""

from __future__ import annotations

import re

from msgspec import Struct

from doctor.core.lazy_pattern import LazyPattern

TOOL_OUTPUT_TRUNCATED_PREFIX = "Tool output was too large and has been truncated"
PERSISTED_OUTPUT_OPEN_TAG = "<persisted-output>"
BATCH_TRUNCATED_PREFIX = "Tool output truncated."
OUTPUT_TOO_LARGE_PREFIX = "Output too large ("
MICROCOMPACT_CLEARED = "[Old tool result content cleared]"
GEMINI_TRUNCATED_PREFIX = "Output too large. Showing"
GEMINI_MASKED_OPEN_TAG = "<tool_output_masked>"
CLAUDE_MCP_SAVED_PREFIX = "Error: result ("
# Codex's exec_command output opens with this header; a cut one says so a few lines below it.
CODEX_EXEC_HEADER = "Chunk ID: "
CODEX_TRUNCATED_MARK = "\nWarning: truncated output ("
CODEX_HEADER_CHARS = 1024

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
HEADER_ONLY_CHARS = 4096

SENTINEL_PREFIXES = (
    TOOL_OUTPUT_TRUNCATED_PREFIX,
    PERSISTED_OUTPUT_OPEN_TAG,
    BATCH_TRUNCATED_PREFIX,
    OUTPUT_TOO_LARGE_PREFIX,
    MICROCOMPACT_CLEARED,
    GEMINI_TRUNCATED_PREFIX,
    GEMINI_MASKED_OPEN_TAG,
    CLAUDE_MCP_SAVED_PREFIX,
    CODEX_EXEC_HEADER,
)
# The tail inspected for pointers written after the preview (Gemini's masking notice).
TAIL_CHARS = 2048


# Qwen's analyzer skips results starting with these when it looks for oversized ones.
ALREADY_TRUNCATED_PREFIXES = (TOOL_OUTPUT_TRUNCATED_PREFIX, PERSISTED_OUTPUT_OPEN_TAG)


def sentinel_kind(raw: object) -> str:
    """Which layer bounded this result text (NONE when it was kept whole)."""
    if not isinstance(raw, str) or not raw.startswith(SENTINEL_PREFIXES):
        return NONE
    if raw.startswith(CODEX_EXEC_HEADER):  # Codex cuts in place, head and tail kept, no file
        return IN_TOOL_TRUNCATION if CODEX_TRUNCATED_MARK in raw[:CODEX_HEADER_CHARS] else NONE
    if raw.startswith(TOOL_OUTPUT_TRUNCATED_PREFIX) or raw.startswith(GEMINI_TRUNCATED_PREFIX):
        return IN_TOOL_TRUNCATION
    if raw.startswith((PERSISTED_OUTPUT_OPEN_TAG, GEMINI_MASKED_OPEN_TAG)):
        return PERSISTED_STUB
    if raw.startswith(CLAUDE_MCP_SAVED_PREFIX):
        return PERSISTED_STUB if _CLAUDE_MCP_SAVED.match(raw[:HEAD_CHARS]) else NONE
    if raw.startswith(BATCH_TRUNCATED_PREFIX):
        return BATCH_OFFLOAD
    if raw.startswith(MICROCOMPACT_CLEARED):
        return MICROCOMPACTED
    return PERSISTED_UNSAVED


class StubInfo(Struct, frozen=True):
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


# Qwen writes "(61 KB)", Claude "(1.2MB)" / "(99.6KB)".
_SAVED_TO = LazyPattern(
    r"^(?:The full output has been saved to|Output too large \([0-9.]+ ?[KMG]?B\)\. Full output saved to|"
    r"Full output saved to|For full output see): (.+?)\s*$",
    re.MULTILINE,
)
_GEMINI_SEE = LazyPattern(r"For full output see: (\S.*?)\s*$", re.MULTILINE)
_DIGEST = LazyPattern(r"^Full output sha256: ([0-9a-f]{64})(?:\r?$)", re.MULTILINE)
_KB = LazyPattern(r"Output too large \((\d+) KB\)")
_TOTALS = LazyPattern(r"^Total characters: (\d+); total lines: (\d+)\.", re.MULTILINE)
_UNSAVED_NOTE = LazyPattern(r"^Output too large \(\d+ KB\)\. (\([^)\n]*\))", re.MULTILINE)
_ARTIFACT_ONE = LazyPattern(r"^Tool output truncated\. Persisted tool-output artifact: (.+?)\s*$", re.MULTILINE)
_ARTIFACT_LIST_ITEM = LazyPattern(r"^- (/.+?)\s*$", re.MULTILINE)
_CLAUDE_MCP_SAVED = LazyPattern(
    r"Error: result \([\d,]+ characters\) exceeds maximum allowed tokens\. Output has been saved to (\S.*?)\.?$",
    re.MULTILINE,
)
_MASKED_AVAILABLE_AT = LazyPattern(r"^Output too large\. Full output available at: (\S.*?)\s*$", re.MULTILINE)


def parse_stub(raw: str) -> StubInfo | None:
    """Pointer, digest and totals from a sentinel header; None for plain results."""
    kind = sentinel_kind(raw)
    if kind in (NONE, MICROCOMPACTED) or raw.startswith(CODEX_EXEC_HEADER):
        return None
    head = _header_block(raw)
    if kind == BATCH_OFFLOAD:
        paths = _batch_artifact_paths(head)
    elif raw.startswith(GEMINI_MASKED_OPEN_TAG):
        paths = _masked_paths(raw)
    else:
        paths = _first_saved_path(head)
    # Each regex runs only where its marker is present: most headers carry two or three.
    digest = _DIGEST.search(head) if "Full output sha256: " in head else None
    kb = _KB.search(head) if "Output too large (" in head else None
    totals = _TOTALS.search(head) if "Total characters: " in head else None
    note = _UNSAVED_NOTE.search(head) if kb is not None and not paths else None
    return StubInfo(
        paths=paths,
        sha256=digest.group(1) if digest else None,
        declared_kb=int(kb.group(1)) if kb else None,
        declared_chars=int(totals.group(1)) if totals else None,
        declared_lines=int(totals.group(2)) if totals else None,
        note=note.group(1) if note else None,
    )


def _header_block(raw: str) -> str:
    """The header lines before the first blank line: every agent's pointer, digest and totals
    sit there, so the regexes never scan a 2,000-char preview. Without a blank line only the
    first HEADER_ONLY_CHARS count (room for a few lines with PATH_MAX-long paths)."""
    head = raw[:HEAD_CHARS]
    end = head.find("\n\n")
    return head[:HEADER_ONLY_CHARS] if end < 0 else head[:end]


def _first_saved_path(head: str) -> tuple[str, ...]:
    if "aved to" not in head and "For full output see: " not in head:
        return ()  # no pointer phrase at all: skip the line-anchored regexes
    match = _SAVED_TO.search(head) or _GEMINI_SEE.search(head) or _CLAUDE_MCP_SAVED.match(head)
    return (match.group(1),) if match else ()


def _masked_paths(raw: str) -> tuple[str, ...]:
    """A masked result can carry two pointers: the truncation spill it kept inside, then its own."""
    inner = _first_saved_path(raw[:HEAD_CHARS])
    own = _MASKED_AVAILABLE_AT.search(raw[-TAIL_CHARS:]) or _MASKED_AVAILABLE_AT.search(raw[:HEAD_CHARS])
    return inner + ((own.group(1),) if own and own.group(1) not in inner else ())


def _batch_artifact_paths(head: str) -> tuple[str, ...]:
    one = _ARTIFACT_ONE.search(head)
    if one:
        return (one.group(1),)
    header_end = head.find("\n\n")
    header = head if header_end < 0 else head[:header_end]
    if "Persisted tool-output artifacts:" not in header:
        return ()
    return tuple(m.group(1) for m in _ARTIFACT_LIST_ITEM.finditer(header))


# Where each stub form's copy of the file's head starts and what ends it.
_PREVIEW_FORMS = (
    ("Preview (up to 2000 chars):\n", "\n</persisted-output>"),  # Qwen persistence gate
    ("Preview (first 2KB):\n", "\n</persisted-output>"),  # Claude
    ("Truncated part of the output:\n", "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"),  # Qwen §c
)
_ESCAPED_TAGS = (
    ("&lt;persisted-output&gt;", "<persisted-output>"),
    ("&lt;/persisted-output&gt;", "</persisted-output>"),
    ("&lt;system-reminder&gt;", "<system-reminder>"),
    ("&lt;/system-reminder&gt;", "</system-reminder>"),
)


def stub_preview_head(raw: object) -> str | None:
    """The part of a stub that must be a prefix of the spilled file, or None if it has none.

    Every form copies the file's first characters: Qwen's gate preview (cut back to
    a newline, `\\n...` appended, its own tags escaped), Claude's "first 2KB",
    Qwen's truncation head (its last line may be cut and marked `...`), Qwen's batch
    head and Gemini's first 8,000 characters. The elision marks are removed here so
    the caller can compare with `file_text.startswith(...)`.
    """
    if not isinstance(raw, str):
        return None
    for opener, closer in _PREVIEW_FORMS:
        start = raw.find(opener)
        if start < 0:
            continue
        start += len(opener)
        end = raw.find(closer, start)
        preview = raw[start:] if end < 0 else raw[start:end]
        preview = _strip_suffix(preview, "\n...")
        if closer.startswith("\n\n---"):
            preview = _cut_last_line(preview)
        if closer == "\n</persisted-output>":
            for escaped, tag in _ESCAPED_TAGS:
                preview = preview.replace(escaped, tag)
        return preview
    if raw.startswith(BATCH_TRUNCATED_PREFIX):
        return _between(raw, "\n\n", "\n...\n")
    if raw.startswith(GEMINI_TRUNCATED_PREFIX):
        body = _between(raw, "\n", "\n\n... [")
        return body
    return None


def _strip_suffix(text: str, suffix: str) -> str:
    return text[: -len(suffix)] if text.endswith(suffix) else text


def _cut_last_line(text: str) -> str:
    """Qwen marks a head line it had to cut with `...`: keep only the lines it kept whole."""
    if not text.endswith("..."):
        return text
    return text[: text.rfind("\n") + 1]


def _between(raw: str, opener: str, closer: str) -> str | None:
    start = raw.find(opener)
    if start < 0:
        return None
    start += len(opener)
    end = raw.find(closer, start)
    return None if end < 0 else raw[start:end]
