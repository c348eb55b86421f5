"""Bound big tool outputs the way Qwen Code 0.24.4 does, so the history holds what Qwen's would.

Two layers, with Qwen's own headers (see shared/reference/qwen-0.24.4-facts.md (b), (c)):
- in-tool truncation: the full text goes to `<spill dir>/<tool>_<12 hex>.output`
  and the model gets a head and tail under "Tool output was too large…";
- the persistence gate, for tools that did not bound themselves: above the
  threshold + 3,000 chars the full text goes to `tool-results/<call id>.txt`
  and the model gets a `<persisted-output>` stub with its sha256.
Spill files are created 0600: they hold whatever the tool printed.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

THRESHOLD = 25_000
GATE_HEADROOM = 3_000
PREVIEW_CHARS = 2_000
SEPARATOR = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"


def write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)


def truncate_in_tool(text: str, tool: str, budget: int, spill_dir: Path, preview: int = 4_000) -> str:
    """Qwen's `truncateAndSaveToFile` with keep "both": a fifth of the preview from the head, the rest from the tail."""
    if len(text) <= budget:
        return text
    path = spill_dir / f"{tool}_{secrets.token_hex(6)}.output"
    write_private(path, text)
    head_chars = (preview - len(SEPARATOR)) // 5
    tail_chars = preview - len(SEPARATOR) - head_chars
    return (
        "Tool output was too large and has been truncated.\n"
        f"The full output has been saved to: {path}\n"
        "To read the complete output, use the read_file tool with the absolute file path above.\n"
        "The truncated output below shows the beginning and end of the content. "
        "The marker '... [CONTENT TRUNCATED] ...' indicates where content was removed.\n\n"
        f"Truncated part of the output:\n{text[:head_chars]}{SEPARATOR}{text[-tail_chars:]}"
    )


def persistence_gate(text: str, call_id: str, spill_dir: Path, threshold: int = THRESHOLD) -> str:
    """Qwen's `maybePersistLargeToolResult`: a stub in place of any text above threshold + 3,000."""
    if len(text) <= threshold + GATE_HEADROOM or text.startswith("<persisted-output>") or "[CONTENT TRUNCATED]" in text:
        return text
    data = text.encode("utf-8", "surrogatepass")
    path = spill_dir / "tool-results" / f"{os.path.basename(call_id)}.txt"
    write_private(path, text)
    return (
        "<persisted-output>\n"
        f"Output too large ({round(len(data) / 1024)} KB). Full output saved to: {path}\n"
        f"Full output sha256: {hashlib.sha256(data).hexdigest()}\n"
        "Note: this file may be cleaned up after 24 hours.\n"
        "To read the complete output, use the read_file tool with the absolute file path above.\n\n"
        f"Preview (up to {PREVIEW_CHARS} chars):\n{_preview(text)}\n</persisted-output>"
    )


def _preview(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return _escape(text)
    cut = text[:PREVIEW_CHARS]
    newline = cut.rfind("\n")
    return _escape(cut[:newline] if newline > 0 else cut) + "\n..."


def _escape(text: str) -> str:
    for tag in ("<persisted-output>", "</persisted-output>", "<system-reminder>", "</system-reminder>"):
        text = text.replace(tag, tag.replace("<", "&lt;").replace(">", "&gt;"))
    return text
