"""Claude Code 2.1.332's arithmetic on a tool result, as pure functions (see docs/formats.md,
"Replay rules: Claude Code"). Minified names are 2.1.332's, in the JavaScript embedded in its binary.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

from doctor.core.jsvalues import js_len
from doctor.whatif.utf16 import js_head

PERSISTED_OPEN = "<persisted-output>"
PERSISTED_CLOSE = "</persisted-output>"
PREVIEW_CHARS = 2000  # r$
PERSIST_BYTES = 64 * 1024 * 1024  # iB: Bash copies at most this much of its output file
GENERAL_PERSIST_BYTES = 1 << 30  # $jr: the general layer's cap on what it writes
BASH_DEFAULT = 30_000  # ATs
BASH_CLAMP = (4_000, 128_000)  # GWo, RLt
READ_BACK_CAP = 150_000  # nBi
# JavaScript's whitespace (`\s`, `trimEnd`): WhiteSpace and LineTerminator.
JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000\ufeff"
_LEADING_BLANK_LINES = re.compile(f"^(?:[{re.escape(JS_SPACE)}]*\n)+")
SIZE_RE = re.compile(r"Output too large \(([\d.]+ ?(?:bytes|KB|MB|GB))\)\. Full output saved to: (.*)\n")


def clamp_bash(value: float | None) -> int | None:
    """`k()`: bashOutputMaxChars clamped to 4,000–128,000 (None when not set)."""
    if value is None:
        return None
    return int(min(max(value, BASH_CLAMP[0]), BASH_CLAMP[1]))


def bash_inline_chars(bash_max: float | None) -> int:
    """`eut()`: the general layer's threshold for Bash (`l3("Bash", eut(), 128000)`)."""
    clamped = clamp_bash(bash_max)
    return BASH_DEFAULT if clamped is None else clamped


def read_back_bytes(bash_max: float | None, env_length: float | None) -> int:
    """`Q1()`: the bytes Bash reads back; a larger output file is persisted by Bash itself."""
    clamped = clamp_bash(bash_max)
    if clamped is not None:
        return clamped
    if env_length is None or env_length != env_length or env_length <= 0:
        return BASH_DEFAULT
    return int(min(env_length, READ_BACK_CAP))


def js_trim_end(text: str) -> str:
    return text.rstrip(JS_SPACE)


def tool_text(output: str) -> str:
    """What the Bash tool returns of an output: leading blank lines and trailing whitespace removed
    (`Fkr()`, then `mapToolResultToToolResultBlockParam`'s `replace(/^(\\s*\\n)+/, "").trimEnd()`)."""
    return js_trim_end(_LEADING_BLANK_LINES.sub("", js_trim_end(output), count=1))


def size_text(size: int) -> str:
    """`pn()`: a size as Claude writes it (1024-based, one decimal, `.0` dropped)."""
    kib = size / 1024
    if kib < 1:
        return f"{size} bytes"
    for unit, value in (("KB", kib), ("MB", kib / 1024)):
        if value < 1024:
            return _to_fixed_1(value) + unit
    return _to_fixed_1(kib / 1024 / 1024) + "GB"


def _to_fixed_1(value: float) -> str:
    """`value.toFixed(1).replace(/\\.0$/, "")`: the double's exact value, halves rounded up."""
    text = str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return text[:-2] if text.endswith(".0") else text


def preview(text: str) -> tuple[str, bool]:
    """`h$e(text, 2000)`: up to the last newline of the first 2,000 chars when that is past char 1,000,
    else the first 2,000 (a surrogate pair is not split); and whether anything was left out."""
    if js_len(text) <= PREVIEW_CHARS:
        return text, False
    first = js_head(text, PREVIEW_CHARS)
    newline = first.rfind("\n")
    cut = newline if newline > PREVIEW_CHARS * 0.5 else PREVIEW_CHARS
    kept = js_head(text, cut)
    if kept and 0xD800 <= ord(kept[-1]) <= 0xDBFF:
        kept = kept[:-1]
    return kept, True


def stub(path: str, size: int, text: str, capped_at: int | None = None) -> str:
    """`BEe()`: the `<persisted-output>` block the model gets for a saved output."""
    kept, more = preview(text)
    head = (f"Output too large ({size_text(size)}). Full output saved to: {path}\n\n" if capped_at is None else
            f"Output exceeded the {size_text(capped_at)} persist limit; only the first {size_text(capped_at)} "
            f"were saved to: {path}\n\n")
    return (f"{PERSISTED_OPEN}\n{head}Preview (first {size_text(PREVIEW_CHARS)}):\n{kept}"
            f"{chr(10) + '...' + chr(10) if more else chr(10)}{PERSISTED_CLOSE}")


def utf8_head(data: bytes, count: int) -> str:
    """`buffer.toString("utf8", 0, count)`: a char cut at the end becomes U+FFFD, as Node decodes it."""
    return data[:count].decode("utf-8", "replace")


def utf8_cap(text: str, max_bytes: int) -> str:
    """`S1()`: the longest head of whole chars within `max_bytes` UTF-8 bytes."""
    if len(text) * 3 <= max_bytes:
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    end = max_bytes
    while end > 0 and data[end] & 0xC0 == 0x80:
        end -= 1
    return data[:end].decode("utf-8", "surrogatepass")
