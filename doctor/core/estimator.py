"""The compaction char estimator, ported exactly from Qwen Code 0.24.4.

`estimatePartChars` / `estimateContentChars` / `resolveSlimmingConfig` in the
bundle's chunk-GC3J5W2O.js. Every figure doctor shows as "chars" is this
estimate, so that it equals Qwen's own `/doctor memory`; tokens are chars / 4,
the ratio the compaction pipeline uses.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from doctor.core.jsvalues import js_len, js_stringify_len, js_truthy
from doctor.core.parts import content_parts, field

DEFAULT_IMAGE_TOKEN_ESTIMATE = 1600
TOKEN_TO_CHAR_RATIO = 4
# Added per functionResponse for its JSON wrapper (name, id, braces).
FUNCTION_RESPONSE_WRAPPER_CHARS = 64
IMAGE_TOKEN_ESTIMATE_ENV = "QWEN_IMAGE_TOKEN_ESTIMATE"


class CircularPart(ValueError):
    """A part refers to itself; JSON.stringify throws, so Qwen omits the section."""


def estimate_part_chars(part: object, image_token_estimate: float = DEFAULT_IMAGE_TOKEN_ESTIMATE) -> float:
    """Qwen's `estimatePartChars(part, imageTokenEstimate)`.

    Returns an int except when a fractional image estimate is in force.
    """
    if part is None:
        raise TypeError("Cannot read properties of null (reading 'inlineData')")
    if js_truthy(field(part, "inlineData")) or js_truthy(field(part, "fileData")):
        return image_token_estimate * TOKEN_TO_CHAR_RATIO
    text = field(part, "text")
    if isinstance(text, str):
        return js_len(text)
    fr = field(part, "functionResponse")
    if js_truthy(fr):
        return function_response_chars(fr, image_token_estimate)
    try:
        size = js_stringify_len(part)
    except ValueError as exc:
        raise CircularPart(str(exc)) from exc
    # JSON.stringify(undefined-like) gives undefined; `.length` of it would throw.
    if size is None:
        raise TypeError("Cannot read properties of undefined (reading 'length')")
    return size


def function_response_chars(fr: object, image_token_estimate: float = DEFAULT_IMAGE_TOKEN_ESTIMATE) -> float:
    """Output (else error) string length, plus nested parts, plus the 64-char wrapper."""
    response = field(fr, "response")
    total = 0
    if response is not None:
        output = field(response, "output")
        if isinstance(output, str):
            total = js_len(output)
        else:
            error = field(response, "error")
            if isinstance(error, str):
                total = js_len(error)
    nested = field(fr, "parts")
    if isinstance(nested, (list, tuple)):
        for inner in nested:
            total += estimate_part_chars(inner, image_token_estimate)
    return total + FUNCTION_RESPONSE_WRAPPER_CHARS


def estimate_content_chars(content: object, image_token_estimate: float = DEFAULT_IMAGE_TOKEN_ESTIMATE) -> float:
    """Qwen's `estimateContentChars`: the sum over `content.parts`, 0 without parts."""
    parts = field(content, "parts")
    if not js_truthy(parts):
        return 0
    return sum(estimate_part_chars(part, image_token_estimate) for part in content_parts(content))


def tokens_for_chars(chars: float) -> int:
    """Token estimate beside a char figure: chars / 4, rounded up as the compaction budget does."""
    return math.ceil(chars / TOKEN_TO_CHAR_RATIO)


def _js_number_from_env(raw: str) -> float:
    """`Number(raw.trim())` for the cases an env value can hold."""
    text = raw.strip(" \t\n\r\v\f\u00a0\ufeff\u2028\u2029")
    if text == "":
        return 0.0
    lowered = text.lower()
    try:
        if lowered.startswith(("0x", "0o", "0b")):
            return float(int(text[2:], {"x": 16, "o": 8, "b": 2}[lowered[1]]))
        if lowered in ("infinity", "+infinity", "-infinity"):
            return float(text.replace("I", "i").replace("+", ""))
        if any(c in lowered for c in ("n", "_")):  # nan, inf, 1_000: not JS numbers
            return math.nan
        return float(text)
    except ValueError:
        return math.nan


def _valid_estimate(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 1
    )


def resolve_image_token_estimate(settings_value: object = None, env: Mapping[str, str] | None = None) -> float:
    """Qwen's `resolveSlimmingConfig(...).imageTokenEstimate`: env > settings > 1600.

    The env value is trimmed and parsed like JS `Number()`; a value counts only
    when it is finite and at least 1 (fractions allowed). Settings key:
    `model.chatCompression.imageTokenEstimate`.
    """
    env = os.environ if env is None else env
    raw = env.get(IMAGE_TOKEN_ESTIMATE_ENV)
    if raw is not None and raw != "":
        parsed = _js_number_from_env(raw)
        if _valid_estimate(parsed):
            return int(parsed) if parsed.is_integer() else parsed
    if settings_value is not None and _valid_estimate(settings_value):
        return settings_value
    return DEFAULT_IMAGE_TOKEN_ESTIMATE
