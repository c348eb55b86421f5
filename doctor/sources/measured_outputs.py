"""Long tool outputs kept as their head and JS length, and decoded again from their line when asked for.

In a long Claude Code or Codex session, the tool-result texts are most of what the reader would hold:
tens of millions of characters per GB, and 4 bytes a character once a text holds one astral character.
The retention analysis needs only a text's JS length and its head (every sentinel test reads the head;
a reader keeps whole any text whose header it parses). So a reader keeps a `MeasuredText` for each long
output, and `MeasuredOutputs` notes the byte span of the line it came from and where in the line's record
it sits. `restored` gives the Contents with those texts decoded again from their lines, by the same
decode as the first read (`jsonl.line_values`). If the text read back is not the one measured, the file
changed since it was read, and `restored` says so. A file that cannot be read again (a pipe) keeps
every text whole: the reader makes no MeasuredOutputs for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from doctor.core.jsvalues import MeasuredText, js_len, utf8_len
from doctor.sources.base import SourceError
from doctor.sources.jsonl import line_values

_RESPONSE_KEYS = ("output", "error")


class MeasuredOutputs:
    """The outputs of one session file that were kept measured. `text_in_line(record, where)` finds
    an output's text again in its line's decoded record, `where` being what `keep` was told."""

    def __init__(self, path: Path, text_in_line: Callable[[object, object], object], *, utf8: bool = False):
        """`utf8`: also note each text's UTF-8 length (Codex's measure counts bytes)."""
        self.path = path
        self._text_in_line = text_in_line
        self._utf8 = utf8
        self._kept: dict[int, tuple[int, int, object]] = {}  # id of a MeasuredText -> (start, end, where)

    def __bool__(self) -> bool:
        return bool(self._kept)

    def keep(self, text: str, head_chars: int, line: tuple[int, int], where: object) -> MeasuredText:
        """`text` (from the line at byte span `line`) as a MeasuredText of `head_chars`, noted."""
        measured = MeasuredText(text[:head_chars], js_len(text), utf8_len(text) if self._utf8 else None)
        self._kept[id(measured)] = (*line, where)
        return measured

    def where(self, text: object) -> object | None:
        """What `keep` was told for `text`, if it is a kept MeasuredText."""
        kept = self._kept.get(id(text)) if type(text) is MeasuredText else None
        return kept[2] if kept is not None else None

    def restored(self, contents: Iterable[dict]) -> Iterator[dict]:
        """`contents` with every kept output decoded again from its line."""
        with open(self.path, "rb") as file:
            for content in contents:
                parts = content.get("parts")
                if not isinstance(parts, list) or not any(self._kept_key(part) for part in parts):
                    yield content
                    continue
                yield {**content, "parts": [self._restored(part, file.fileno()) for part in parts]}

    def _kept_key(self, part: object) -> str | None:
        function_response = part.get("functionResponse") if isinstance(part, dict) else None
        response = function_response.get("response") if isinstance(function_response, dict) else None
        if isinstance(response, dict):
            for key in _RESPONSE_KEYS:
                if type(response.get(key)) is MeasuredText and id(response[key]) in self._kept:
                    return key
        return None

    def _restored(self, part: dict, descriptor: int) -> dict:
        key = self._kept_key(part)
        if key is None:
            return part
        function_response = part["functionResponse"]
        measured = function_response["response"][key]
        start, end, where = self._kept[id(measured)]
        data = os.pread(descriptor, end - start, start)
        values = line_values(self.path, 0, data, memoryview(data), 0, len(data), True, [])
        text = self._text_in_line(values[0], where) if len(values) == 1 else None
        if type(text) is not str or js_len(text) != measured.js_length or not text.startswith(measured):
            raise SourceError(self.path, "changed since it was read: read the session again")
        return {**part, "functionResponse": {**function_response, "response": {**function_response["response"], key: text}}}
