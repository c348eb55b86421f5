"""Qwen Code 0.24.4's truncation arithmetic, ported line for line from its bundle.

Each function names the JavaScript it copies (`node_modules/@qwen-code/qwen-code/chunks/…`). Texts are in
UTF-16 unit form (`jsstring.to_units`), so `len`, slices and `split` count as JavaScript does. Nothing here
writes a file: where Qwen saves the full text, the replay only needs the path it would have written,
which the caller passes in (the session's own path for that result when it has one, so a replay under the
session's own settings reproduces the recorded text exactly).
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Sequence

from doctor.core.budgets import BUILTIN_TOOLS, MCP_TOOL_MAX_OUTPUT_CHARS, SHELL_TOOL, QwenLimits, is_mcp_tool_name
from doctor.whatif.jsstring import js_floor, js_round, sha256_hex, utf8
from doctor.whatif.qwen_tools import js_trim

# chunk-2VS5EEXU.js:5131–5137 (tools/truncation.ts)
PREVIEW_SIZE_CHARS = 2000
MAX_FILE_SIZE_BYTES = 50 * 1024 * 1024
MAX_SESSION_BYTES = 500 * 1024 * 1024
TOOL_OUTPUT_TRUNCATED_PREFIX = "Tool output was too large and has been truncated"
CONTENT_TRUNCATED_MARK = "... [CONTENT TRUNCATED] ..."
PERSISTED_OPEN = "<persisted-output>"
SEPARATOR = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"
ELLIPSIS = "..."
READ_FILE_TOOL = "read_file"
# chunk-DPEB6S2R.js:56956 (core/coreToolScheduler.ts)
GATE_HEADROOM = 3000
# Tools the gate leaves alone (chunk-DPEB6S2R.js:56957 GATE_EXEMPT_TOOLS).
GATE_EXEMPT = frozenset({"exec", "read_file", "read_mcp_resource", "enter_plan_mode"})
# chunk-DPEB6S2R.js:46891 (tools/shell.ts)
DEFAULT_SHELL_OUTPUT_THRESHOLD = 30000
SHELL_PREVIEW_CHARS = 4000
_TAGS = re.compile(r"</?persisted-output>|</?system-reminder>")


def truncate_and_save(content: str, output_file: str, threshold: float, truncate_lines: float, keep: str = "both",
                      preview_chars: float | None = None) -> tuple[str, str | None]:
    """`truncateAndSaveToFile` (chunk-2VS5EEXU.js:5139): (text, the file it saved) or (content, None)."""
    preview_chars = threshold if preview_chars is None else preview_chars
    if len(content) <= threshold and not math.isfinite(truncate_lines):
        return content, None
    if len(content) <= threshold and content.count("\n") + 1 <= truncate_lines:
        return content, None  # (Qwen splits first; counting is the same test without the copies)
    lines = content.split("\n")
    effective = min(truncate_lines, len(lines))
    if keep == "head":
        head_count, tail_count = effective, 0
    elif keep == "tail":
        head_count, tail_count = 0, effective
    else:
        head_count = max(math.floor(effective / 5), 1)
        tail_count = effective - head_count
    preview_budget = max(0, preview_chars)
    sep = SEPARATOR if preview_budget > len(SEPARATOR) else ""
    content_budget = preview_budget - len(sep)
    head_budget = content_budget if keep == "head" else 0 if keep == "tail" else js_floor(content_budget / 5)
    beginning: list[str] = []
    head_chars = 0
    for i in range(min(head_count, len(lines))):
        remaining = head_budget - head_chars
        if remaining <= 0:
            break
        if len(lines[i]) + 1 > remaining:
            if remaining >= len(ELLIPSIS):
                beginning.append(lines[i][: int(remaining - len(ELLIPSIS))] + ELLIPSIS)
            head_chars = head_budget
            break
        beginning.append(lines[i])
        head_chars += len(lines[i]) + 1
    tail_budget = 0 if keep == "head" else max(content_budget - head_chars, 0)
    end: list[str] = []
    tail_chars = 0
    tail_start = max(len(lines) - tail_count, len(beginning))
    for i in range(len(lines) - 1, tail_start - 1, -1):
        remaining = tail_budget - tail_chars
        if remaining <= 0:
            break
        if len(lines[i]) + 1 > remaining:
            if remaining >= len(ELLIPSIS):
                keep_chars = int(remaining - len(ELLIPSIS))
                end.insert(0, ELLIPSIS + (lines[i][-keep_chars:] if keep_chars > 0 else ""))
            tail_chars = tail_budget
            break
        end.insert(0, lines[i])
        tail_chars += len(lines[i]) + 1
    if keep == "head":
        truncated = "\n".join(beginning) + sep
    elif keep == "tail":
        truncated = sep + "\n".join(end)
    else:
        truncated = "\n".join(beginning) + sep + "\n".join(end)
    wrapped = (f"{TOOL_OUTPUT_TRUNCATED_PREFIX}.\nThe full output has been saved to: {output_file}\n"
               f"To read the complete output, use the {READ_FILE_TOOL} tool with the absolute file path above.\n"
               "The truncated output below shows the beginning and end of the content. The marker "
               f"'{CONTENT_TRUNCATED_MARK}' indicates where content was removed.\n\nTruncated part of the output:\n"
               f"{truncated}")
    if len(wrapped) >= len(content):
        return content, None
    return wrapped, output_file


def truncate_tool_output(content: str, output_file: str, threshold: float, lines: float, keep: str = "both",
                         preview_chars: float | None = None) -> tuple[str, str | None]:
    """`truncateToolOutput` (chunk-2VS5EEXU.js:5235) with its limits resolved by the caller."""
    if threshold <= 0 or lines <= 0:
        return content, None
    if len(content) <= threshold and not math.isfinite(lines):
        return content, None
    return truncate_and_save(content, output_file, threshold, lines, keep, preview_chars)


def max_output_chars(canonical: str, limits: QwenLimits) -> float | None:
    """The tool's `maxOutputChars` as the scheduler reads it (None: the threshold and the line cap apply)."""
    if canonical == SHELL_TOOL:
        return limits.shell_budget
    if is_mcp_tool_name(canonical):
        return MCP_TOOL_MAX_OUTPUT_CHARS
    spec = next((spec for spec in BUILTIN_TOOLS if spec.name == canonical), None)
    return spec.max_output_chars if spec is not None else None


def truncate_llm_content(tool: str, canonical: str, text: str, limits: QwenLimits,
                         output_file: str) -> tuple[str, str | None]:
    """`truncateLlmContent` with the tool's limits (chunk-DPEB6S2R.js:60890–60915, chunk-2VS5EEXU.js:5277):
    the text, and the file a cut saved the whole to (None: no file)."""
    if js_trim(text) == "":
        return f"({tool} completed with no output)", None
    if text.startswith(TOOL_OUTPUT_TRUNCATED_PREFIX):
        return text, None
    max_chars = max_output_chars(canonical, limits)
    threshold, lines = (limits.threshold, limits.line_cap) if max_chars is None else (max_chars, math.inf)
    keep = "tail" if canonical == "agent" else "both"
    return truncate_tool_output(text, output_file, threshold, lines, keep)


def shell_body_budget(output_threshold: float, notices_chars: int) -> float:
    """The shell's own budget for its body, room kept for the notices it appends (chunk-DPEB6S2R.js:48593)."""
    return max(1, output_threshold - min(notices_chars, js_floor(output_threshold / 2)))


def is_already_truncated(text: str) -> bool:
    """`isAlreadyTruncated` (chunk-2VS5EEXU.js:5315)."""
    return CONTENT_TRUNCATED_MARK in text or text.startswith(PERSISTED_OPEN)


def generate_preview(content: str) -> str:
    """`generatePreview` (chunk-2VS5EEXU.js:5319)."""
    if len(content) <= PREVIEW_SIZE_CHARS:
        text = content
    else:
        head = content[:PREVIEW_SIZE_CHARS]
        newline = head.rfind("\n")
        text = (head[:newline] if newline > 0 else head) + "\n..."
    return _TAGS.sub(lambda m: f"&lt;{m.group()[1:-1]}&gt;", text)


def build_stub(content: str, byte_size: int, path_or_note: str) -> str:
    """`buildStub` (chunk-2VS5EEXU.js:5420)."""
    preview = generate_preview(content)
    size_kb = js_round(byte_size / 1024)
    digest = sha256_hex(content)
    if path_or_note.startswith("/"):
        return (f"{PERSISTED_OPEN}\nOutput too large ({size_kb} KB). Full output saved to: {path_or_note}\n"
                f"Full output sha256: {digest}\nNote: this file may be cleaned up after 24 hours.\n"
                f"To read the complete output, use the {READ_FILE_TOOL} tool with the absolute file path above.\n\n"
                f"Preview (up to {PREVIEW_SIZE_CHARS} chars):\n{preview}\n</persisted-output>")
    return (f"Output too large ({size_kb} KB). {path_or_note}\nFull output sha256: {digest}\n\n"
            f"Preview (up to {PREVIEW_SIZE_CHARS} chars):\n{preview}")


def normalize_call_id(call_id: str) -> str | None:
    """`normalizeToolResultCallId` (chunk-2VS5EEXU.js:5329): Node's `path.basename`, NUL as `_`."""
    base = posixpath.basename(call_id.rstrip("/")) if call_id.strip("/") else ""
    safe = base.replace("\x00", "_")
    return None if not safe or safe in (".", "..") else safe


class PersistBudget:
    """The session's 500 MiB of persisted tool results (`config.trackToolResultBytes`), spent in order."""

    def __init__(self) -> None:
        self.written = 0


def persist_and_truncate(call_id: str, content: str, tool_results_dir: str, budget: PersistBudget) -> tuple[str, str | None]:
    """`persistAndTruncateToolResult` (chunk-2VS5EEXU.js:5334): the stub, and the file it names (None: no file)."""
    byte_size = len(utf8(content))
    if byte_size > MAX_FILE_SIZE_BYTES:
        return build_stub(content, byte_size, "(file too large to persist)"), None
    if budget.written + byte_size > MAX_SESSION_BYTES:
        return build_stub(content, byte_size, "(session disk budget exhausted)"), None
    safe = normalize_call_id(call_id)
    if safe is None:
        return build_stub(content, byte_size, "(invalid callId)"), None
    budget.written += byte_size
    path = posixpath.join(tool_results_dir, f"{safe}.txt")
    return build_stub(content, byte_size, path), path


def allocate_text_budget(lengths: Sequence[int], budget: float) -> list[int]:
    """`allocateTextBudget` (chunk-DPEB6S2R.js:13875): water-filling, the remainder one char at a time."""
    allocations = [0] * len(lengths)
    remaining = max(0, math.floor(budget))
    active = list(range(len(lengths)))
    while active:
        share = remaining // len(active)
        fixed = [i for i in active if lengths[i] <= share]
        if not fixed:
            for i in active:
                allocations[i] = share
            remainder = remaining - share * len(active)
            for i in active:
                if remainder == 0:
                    break
                allocations[i] += 1
                remainder -= 1
            break
        for i in fixed:
            allocations[i] = lengths[i]
            remaining -= lengths[i]
        fixed_set = set(fixed)
        active = [i for i in active if i not in fixed_set]
    return allocations


def _slice_start(text: str, length: int) -> str:
    """`sliceStartWithoutBrokenSurrogate` (chunk-DPEB6S2R.js:13904)."""
    end = min(max(0, length), len(text))
    if end > 0 and 0xD800 <= ord(text[end - 1]) <= 0xDBFF:
        end -= 1
    return text[:end]


def _slice_end(text: str, length: int) -> str:
    """`sliceEndWithoutBrokenSurrogate` (chunk-DPEB6S2R.js:13913)."""
    start = max(0, len(text) - max(0, length))
    if start < len(text) and 0xDC00 <= ord(text[start]) <= 0xDFFF:
        start += 1
    return text[start:]


def fit_text(text: str, max_chars: int, files: Sequence[str] | None) -> str:
    """`fitText` (chunk-DPEB6S2R.js:13922): a batch-budget replacement of exactly `max_chars` or fewer."""
    if len(text) <= max_chars:
        return text
    if max_chars <= 0:
        return ""
    if files:
        header = (f"Tool output truncated. Persisted tool-output artifact: {files[0]}" if len(files) == 1 else
                  "Tool output truncated. Persisted tool-output artifacts:\n" + "\n".join(f"- {f}" for f in files))
    else:
        header = "Tool output truncated."
    if len(header) >= max_chars:
        return _slice_start(header, max_chars)
    separator, marker = "\n\n", "\n...\n"
    preview_budget = max_chars - len(header) - len(separator)
    if preview_budget <= 0:
        return _slice_start(header, max_chars)
    if preview_budget <= len(marker):
        return f"{header}{separator}{_slice_start(text, preview_budget)}"
    content_budget = preview_budget - len(marker)
    head_budget = content_budget // 5
    tail_budget = content_budget - head_budget
    return f"{header}{separator}{_slice_start(text, head_budget)}{marker}{_slice_end(text, tail_budget)}"
