"""Codex 0.171.0's truncation of a tool output, as pure functions of (text, budget).

Ported from Codex's source (`codex-rs/utils/string/src/truncate.rs`, `utils/output-truncation/src/lib.rs`)
and checked against the 0.171.0 binary's strings and its recordings (tests/recordings/codex/whatif/):
Codex cuts the middle out of an output on UTF-8 char boundaries, keeping budget ÷ 2 bytes of head and
the rest of the budget as tail, and says what it left out in tokens (≈ 4 bytes) or, under a bytes
policy, in chars. Texts here are Python strings of the command's (lossily decoded) UTF-8 output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BYTES_PER_TOKEN = 4  # APPROX_BYTES_PER_TOKEN
EXEC_DEFAULT_MAX_TOKENS = 10_000  # unified exec's DEFAULT_MAX_OUTPUT_TOKENS (recorded: 40,000 bytes)
TOKENS = "tokens"
BYTES = "bytes"
WARNING = "Warning: truncated output (original token count: {tokens})\nTotal output lines: {lines}\n\n"
WARNING_RE = re.compile(r"Warning: truncated output \(original token count: (\d+)\)\n"
                        r"(?:Total output lines: (\d+)\n)?(\.\.\. (\d+) bytes omitted \.\.\.\n)?\n")
MARKER_RE = re.compile("\u2026(\\d+) (tokens|chars) truncated\u2026")


@dataclass(frozen=True, slots=True)
class Policy:
    """`TruncationPolicy`: Tokens(n) or Bytes(n)."""

    unit: str
    limit: int

    @property
    def byte_budget(self) -> int:
        return self.limit * BYTES_PER_TOKEN if self.unit == TOKENS else self.limit

    @property
    def token_budget(self) -> int:
        return self.limit if self.unit == TOKENS else approx_tokens(self.limit)


def approx_tokens(byte_count: int) -> int:
    """`approx_tokens_from_byte_count`: bytes ÷ 4, rounded up."""
    return (byte_count + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN


def session_policy(catalog_model: bool, token_limit: int | None) -> Policy:
    """The turn's policy: the model's (catalog: Tokens(10,000), else Bytes(10,000)), or
    `tool_output_token_limit` in the model's unit (× 4 bytes for a bytes policy)."""
    if catalog_model:
        return Policy(TOKENS, 10_000 if token_limit is None else token_limit)
    return Policy(BYTES, 10_000 if token_limit is None else token_limit * BYTES_PER_TOKEN)


def exec_policy(policy: Policy, max_output_tokens: object) -> Policy:
    """What an exec_command output is cut to: Tokens(the call's `max_output_tokens`, default 10,000)
    when that is below the policy's tokens, else the policy itself (recorded: a bytes policy of 48,000
    cut an output to Tokens(10,000) with a tokens marker when the call left max_output_tokens unset)."""
    requested = max_output_tokens if isinstance(max_output_tokens, int) and not isinstance(max_output_tokens, bool) \
        and max_output_tokens >= 0 else EXEC_DEFAULT_MAX_TOKENS
    return Policy(TOKENS, requested) if requested < policy.token_budget else policy


def line_count(text: str) -> int:
    """Rust's `str::lines().count()`: lines end at "\\n"; a final newline adds no empty line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


# Every byte that starts a char (all but 0x80–0xBF): deleting them leaves the continuation bytes, counted in C
# (a Python loop over a megabyte output cost a second a replay).
_LEAD_BYTES = bytes(byte for byte in range(256) if not _is_continuation(byte))


def split(data: bytes, head_bytes: int, tail_bytes: int) -> tuple[bytes, bytes, int]:
    """`split_string`: the longest head of whole chars within `head_bytes`, the longest tail of whole chars
    within `tail_bytes`, and how many chars lie between them."""
    prefix_end = min(head_bytes, len(data))
    while prefix_end > 0 and prefix_end < len(data) and _is_continuation(data[prefix_end]):
        prefix_end -= 1
    suffix_start = max(len(data) - tail_bytes, 0)
    while suffix_start < len(data) and _is_continuation(data[suffix_start]):
        suffix_start += 1
    suffix_start = max(suffix_start, prefix_end)
    middle = data[prefix_end:suffix_start]
    removed = len(middle) - len(middle.translate(None, _LEAD_BYTES))  # chars: the bytes that are no continuation
    return data[:prefix_end], data[suffix_start:], removed


def truncate(text: str, policy: Policy) -> str:
    """`truncate_text`: the middle cut (`truncate_middle_chars` / `truncate_middle_with_token_budget`)."""
    data = text.encode("utf-8", "surrogatepass")
    budget = policy.byte_budget
    if not text:
        return ""
    if budget == 0:
        removed = approx_tokens(len(data)) if policy.unit == TOKENS else len(text)
        return marker(policy.unit, removed)
    if len(data) <= budget:
        return text
    head, tail, removed_chars = split(data, budget // 2, budget - budget // 2)
    removed = approx_tokens(len(data) - budget) if policy.unit == TOKENS else removed_chars
    return head.decode("utf-8", "surrogatepass") + marker(policy.unit, removed) + tail.decode("utf-8", "surrogatepass")


def marker(unit: str, removed: int) -> str:
    return f"\u2026{removed} {'tokens' if unit == TOKENS else 'chars'} truncated\u2026"


def formatted_truncate(text: str, policy: Policy) -> str:
    """`formatted_truncate_text`: the text, or the warning lines and the middle cut."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= policy.byte_budget:
        return text
    return WARNING.format(tokens=approx_tokens(size), lines=line_count(text)) + truncate(text, policy)


@dataclass(frozen=True, slots=True)
class Cut:
    """What a cut output still tells of the whole one: its head and tail, the warning's counts and what
    the marker says was left out."""

    head: str
    tail: str
    original_tokens: int
    lines: int | None
    unit: str
    removed: int
    omitted_bytes: int | None

    @property
    def total_chars(self) -> int | None:
        """The whole output's chars (known when the marker counted chars)."""
        return len(self.head) + len(self.tail) + self.removed if self.unit == BYTES else None


def parse_cut(body: str) -> Cut | None:
    """A cut exec body (the text after `Output:\\n`) taken apart, or None if it is not one."""
    warning = WARNING_RE.match(body)
    if warning is None:
        return None
    rest = body[warning.end():]
    found = list(MARKER_RE.finditer(rest))
    if len(found) != 1:
        return None
    cut = found[0]
    return Cut(rest[:cut.start()], rest[cut.end():], int(warning.group(1)),
               int(warning.group(2)) if warning.group(2) else None, TOKENS if cut.group(2) == "tokens" else BYTES,
               int(cut.group(1)), int(warning.group(4)) if warning.group(4) else None)


def recut(cut: Cut, policy: Policy) -> str | None:
    """The body under a smaller `policy`, from a cut output's own head and tail, or None when that
    needs more of the output than the cut kept (or counts it does not give)."""
    budget = policy.byte_budget
    if cut.omitted_bytes is not None or cut.lines is None:
        return None  # Codex's 1 MiB exec buffer dropped the middle: another layout, not replayed
    head, tail = cut.head.encode("utf-8", "surrogatepass"), cut.tail.encode("utf-8", "surrogatepass")
    low_bytes = (cut.original_tokens - 1) * BYTES_PER_TOKEN + 1  # the whole output had at least this many bytes
    if budget >= low_bytes or budget // 2 > len(head) or budget - budget // 2 > len(tail):
        return None
    # The session's head ends (and its tail starts) on a char boundary of the whole output: a lead byte
    # beside each stands for the byte the whole output has there.
    kept_head, _, _ = split(head + b"\xff", budget // 2, 0)
    _, kept_tail, _ = split(b"\xff" + tail, 0, budget - budget // 2)
    if policy.unit == TOKENS:
        if budget % BYTES_PER_TOKEN:
            return None
        removed = cut.original_tokens - budget // BYTES_PER_TOKEN
    else:
        total = cut.total_chars
        if total is None:
            return None
        removed = total - len(kept_head.decode("utf-8", "surrogatepass")) - len(kept_tail.decode("utf-8", "surrogatepass"))
    warning = WARNING.format(tokens=cut.original_tokens, lines=cut.lines)
    return (warning + kept_head.decode("utf-8", "surrogatepass") + marker(policy.unit, removed)
            + kept_tail.decode("utf-8", "surrogatepass"))
