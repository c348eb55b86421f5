"""Make untrusted text safe to print: the one sanitizer for every face of doctor.

Tool output, tool names, file names and error messages all come from files an
agent wrote, and may hold ANSI escapes (colour, cursor moves, terminal title or
clipboard writes via OSC), other control characters, or bidirectional overrides
that reorder what a reader sees. Printed as-is they could repaint a terminal or
hide text in a pasted report. `inert` removes escape sequences and shows every
other control character as a visible `\\xNN` / `\\uNNNN` escape. Rich markup
needs nothing here: the reports never pass text through a markup parser.
"""

from __future__ import annotations

import re

# CSI (ESC [ … final), OSC (ESC ] … BEL or ST), and two-character escapes.
ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# C0 and C1 controls (tab and newline kept), DEL, and bidirectional overrides.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """Terminal-safe text: escape sequences removed, other controls shown as escapes; newlines kept."""
    return UNSAFE.sub(_visible, ESCAPE_SEQUENCE.sub("", text))


def inert_line(text: object) -> str:
    """`inert`, on one line: for table cells, names and messages (None prints as empty)."""
    if text is None:
        return ""
    return inert(str(text)).replace("\n", "\\n").replace("\t", " ")


def inert_json(text: str) -> str:
    """JSON text safe on a terminal, meaning unchanged: the C1 controls, DEL and bidi overrides that
    `json.dumps(ensure_ascii=False)` leaves raw become `\\uNNNN` escapes (C0 ones it escapes itself)."""
    return UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


# UNSAFE's characters in UTF-8: the C0 controls and DEL are single bytes; the C1 controls and the bidi overrides
# are sequences behind a lead byte that a pattern finds quickly (a class of many characters is tried at every byte).
_UNSAFE_BYTES = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])
_UNSAFE_SEQUENCES = (re.compile(rb"\xc2[\x80-\x9f]"), re.compile(rb"\xe2(?:\x80[\xaa-\xae]|\x81[\xa6-\xa9])"))


def inert_json_bytes(data: bytes) -> bytes:
    """`inert_json` of UTF-8 JSON without decoding it, when it holds nothing to escape (nearly always):
    `doctor whatif --json` prints megabytes, which decoding, a pass of UNSAFE and encoding again cost
    several times what orjson took to write them. Otherwise exactly `inert_json`'s text, in UTF-8."""
    if len(data.translate(None, _UNSAFE_BYTES)) == len(data) and not any(
            pattern.search(data) for pattern in _UNSAFE_SEQUENCES):
        return data
    return inert_json(data.decode("utf-8", "surrogatepass")).encode("utf-8", "surrogatepass")
