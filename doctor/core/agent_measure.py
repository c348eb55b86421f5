"""What each agent's model received, in that agent's own measure: the size it applies its limits to,
and tokens by the agent's own estimate.

Qwen Code's estimator (`doctor.core.estimator`: output + nested parts + 64 chars a response) is what
Qwen's `/doctor memory` sums, and doctor keeps it for every session (`toolResultRetention`, parity).
The other agents neither count the 64 chars nor estimate tokens as chars ÷ 4 rounded up; each has its
own (read from the client packages, re-extracted by tests/reference/test_client_budgets.py):

- Claude Code 2.1.332: a result's size is the JS length of its text blocks (`contentSize`: the
  content string, or the sum of its `text` blocks; images are not counted), which its persistence
  thresholds compare. Tokens: `roughTokenCountEstimation`, Math.round(length / 4) for each text
  block, 2,000 for each image or document, Math.round(JSON length / 4) for any other block.
- Gemini CLI 0.61.0: the size is the JS length of the output (or error) string, which
  `tools.truncateToolOutputThreshold` compares. Tokens: `estimateTokenCountSync([part])`, for a
  functionResponse floor((name length + JSON.stringify(response) length) / 4 + its nested parts'
  estimate) (text: 1/4 a char, non-ASCII 1.5, over 100,000 chars length / 4; an image 3,000, a PDF
  25,800, another part its JSON length / 4).
- Codex 0.171.0: the size is the output text's UTF-8 bytes, which the truncation policy counts.
  Tokens: `approx_token_count`, ceil(bytes / 4) (what Codex writes as "Original token count" in
  an exec output's header). Nested images are not counted.

`measure_for(agent)` gives the agent's measure, None for Qwen Code and the sources judged by
Qwen's rules (message dumps, live hosts), whose figures stay Qwen's. A measure is a pure function
of one functionResponse: the result table calls it once per result.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from msgspec import Struct

from doctor.core.agent_rules.model import BYTES, CHARS
from doctor.core.jsvalues import js_len, js_stringify_len, json_string_len, utf8_len
from doctor.core.parts import field
# Key the Claude reader sets on a functionResponse whose content had several text blocks: their JS
# lengths (Claude rounds each block's estimate on its own; the history joins their text).
TEXT_BLOCKS = "doctorTextBlocks"

CLAUDE_IMAGE_TOKENS = 2_000  # `y` beside `roughTokenCountEstimationForBlock`
GEMINI_IMAGE_TOKENS = 3_000  # IMAGE_TOKEN_ESTIMATE
GEMINI_PDF_TOKENS = 25_800  # PDF_TOKEN_ESTIMATE
GEMINI_FULL_HEURISTIC_CHARS = 100_000  # MAX_CHARS_FOR_FULL_HEURISTIC
GEMINI_NON_ASCII_TOKENS = 1.5  # NON_ASCII_TOKENS_PER_CHAR
GEMINI_MAX_DEPTH = 3  # MAX_RECURSION_DEPTH
CHARS_PER_TOKEN = 4


class AgentMeasure(Struct, frozen=True):
    """One agent's measure: its unit, its token estimate by name, and its command to compact."""

    agent: str
    client: str
    unit: str  # CHARS (UTF-16 code units, JS .length) or BYTES (UTF-8)
    estimate_rule: str  # the agent's token estimate, as reports state it after "<client>'s estimate: "
    compact_command: str  # what the agent's user types to summarise the conversation

    def of(self, fr: object, raw: object, raw_length: int, name: object) -> tuple[float, int]:
        """(size in `unit`, tokens) of one functionResponse whose output-or-error string is `raw`
        (`raw_length` its JS length; 0 when there is none)."""
        return _MEASURES[self.agent](fr, raw, raw_length, name)

    def size_of_text(self, text: str) -> int:
        """The size of a result that is this text alone (an after-tool hook's payload)."""
        return utf8_len(text) if self.unit == BYTES else js_len(text)

    def tokens_of_text(self, text: str, name: str = "") -> int:
        """Tokens of a result that is this text alone, as `of` counts them."""
        response = {"output": text}
        return self.of({"name": name, "response": response}, text, js_len(text), name)[1]

    @property
    def estimate(self) -> str:
        """The estimate's name: `Claude Code's estimate`."""
        return f"{self.client}'s estimate"

    def to_json(self) -> dict:
        return {"agent": self.agent, "client": self.client, "unit": self.unit,
                "tokenEstimate": f"{self.estimate}: {self.estimate_rule}", "compactCommand": self.compact_command}


def _js_round(value: float) -> int:
    """Math.round: halves go up."""
    return math.floor(value + 0.5)


def _nested(fr: object) -> list:
    parts = field(fr, "parts")
    return list(parts) if isinstance(parts, (list, tuple)) else []


def _is_media(part: object) -> bool:
    return field(part, "inlineData") is not None or field(part, "fileData") is not None


def _claude(fr: object, raw: object, raw_length: int, name: object) -> tuple[float, int]:
    blocks = fr.get(TEXT_BLOCKS) if isinstance(fr, dict) else None
    if isinstance(blocks, list):
        tokens = sum(_js_round(length / CHARS_PER_TOKEN) for length in blocks)
    else:
        tokens = _js_round(raw_length / CHARS_PER_TOKEN) if isinstance(raw, str) else 0
    for part in _nested(fr):
        if _is_media(part):
            tokens += CLAUDE_IMAGE_TOKENS
        else:
            tokens += _js_round((js_stringify_len(part) or 0) / CHARS_PER_TOKEN)
    return raw_length, tokens


def _gemini_text_tokens(text: str) -> float:
    length = js_len(text)
    if length > GEMINI_FULL_HEURISTIC_CHARS:
        return length / CHARS_PER_TOKEN
    ascii = length if text.isascii() else len(text.encode("ascii", "ignore"))
    return ascii / CHARS_PER_TOKEN + (length - ascii) * GEMINI_NON_ASCII_TOKENS  # per UTF-16 unit, as the CLI loops


def _gemini_parts_tokens(parts: list, depth: int) -> int:
    """`estimateTokenCountSync(parts, depth)`."""
    if depth > GEMINI_MAX_DEPTH:
        return 0
    total = 0.0
    for part in parts:
        text = field(part, "text")
        if isinstance(text, str):
            total += _gemini_text_tokens(text)
        elif field(part, "functionResponse") is not None:
            total += _gemini_response_tokens(field(part, "functionResponse"), depth)
        else:
            media = field(part, "inlineData") or field(part, "fileData")
            mime = field(media, "mimeType") if media is not None else None
            if isinstance(mime, str) and mime.startswith("image/"):
                total += GEMINI_IMAGE_TOKENS
            elif isinstance(mime, str) and mime.startswith("application/pdf"):
                total += GEMINI_PDF_TOKENS
            else:
                total += (js_stringify_len(part) or 0) / CHARS_PER_TOKEN
    return math.floor(total)


def _response_json_length(response: object) -> int:
    """JSON.stringify(response).length, its string values measured by the reader when they are long."""
    if isinstance(response, str):
        return js_len(response)  # Gemini counts a string response as it stands
    if isinstance(response, dict) and all(isinstance(key, str) and isinstance(value, str) for key, value in response.items()):
        return 2 + max(len(response) - 1, 0) + sum(json_string_len(key) + 1 + json_string_len(value)
                                                  for key, value in response.items())
    return js_stringify_len(response) or 0


def _gemini_response_tokens(fr: object, depth: int) -> float:
    """`estimateFunctionResponseTokens` (not yet floored)."""
    name = field(fr, "name")
    tokens = (js_len(name) if isinstance(name, str) else 0) / CHARS_PER_TOKEN
    response = field(fr, "response")
    if response is not None:
        tokens += _response_json_length(response) / CHARS_PER_TOKEN
    nested = _nested(fr)
    if nested:
        tokens += _gemini_parts_tokens(nested, depth + 1)
    return tokens


def _gemini(fr: object, raw: object, raw_length: int, name: object) -> tuple[float, int]:
    return raw_length, math.floor(_gemini_response_tokens(fr, 0))


def _codex(fr: object, raw: object, raw_length: int, name: object) -> tuple[float, int]:
    size = utf8_len(raw) if isinstance(raw, str) else 0
    return size, math.ceil(size / CHARS_PER_TOKEN)


_MEASURES: dict[str, Callable[[object, object, int, object], tuple[float, int]]] = {
    "claude": _claude, "gemini": _gemini, "codex": _codex,
}

MEASURES = {
    "claude": AgentMeasure("claude", "Claude Code", CHARS,
                           "each text block's chars ÷ 4, rounded; 2,000 tokens an image", "/compact"),
    "gemini": AgentMeasure("gemini", "Gemini CLI", CHARS,
                           "the tool name and the response's JSON, chars ÷ 4, rounded down", "/compress"),
    "codex": AgentMeasure("codex", "Codex CLI", BYTES, "UTF-8 bytes ÷ 4, rounded up", "/compact"),
}


def measure_for(agent: str) -> AgentMeasure | None:
    """The agent's own measure, or None where Qwen Code's figures are the agent's own (Qwen, dumps, hosts)."""
    return MEASURES.get(agent)
