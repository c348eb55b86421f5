"""Long Codex tool outputs kept as their head and JS length, and read again from the file when asked for.

A rollout's `function_call_output` texts are most of what a long session holds: 13 M characters per
100 MB in the benchmark's rollouts. Kept whole as Python strings (4 bytes a character once one astral
character is in them), they made a 1 GB rollout peak at 660 MiB. The retention analysis needs only
their JS length and their head: Codex's truncation mark is looked for in the first CODEX_HEADER_CHARS, the
in-place truncation markers anywhere in the text are looked for here, while the text is at hand. So the
session keeps a `MeasuredText` for each long output, and `Outputs` notes the line it came from.
`restored` gives the history with those texts decoded again from their lines, by the same decode as the
first read. If the text read back is not the one measured, the file changed since it was read, and
`restored` says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from doctor.core.jsvalues import MeasuredText, js_len
from doctor.core.sentinels import CODEX_EXEC_HEADER, CODEX_HEADER_CHARS, CODEX_TRUNCATED_MARK, SENTINEL_PREFIXES
from doctor.sources.base import SourceError
from doctor.sources.jsonl import line_values

# Outputs shorter than this are kept whole: measuring them saves little.
MEASURE_FROM = 4 * CODEX_HEADER_CHARS
HEAD_CHARS = 256  # every sentinel prefix is shorter
_RESPONSE_KEYS = ("output", "error")


def _head_length(output: str) -> int:
    """How much of `output` a MeasuredText keeps: HEAD_CHARS for the sentinel tests, and up to the end of
    Codex's truncation mark when the mark is in the first CODEX_HEADER_CHARS (where `sentinel_kind`
    looks for it; a head without it tells the same: not there). 1,024 characters a head, 4 bytes each
    once an astral character is in it, were 55 MB of a 1 GB rollout."""
    mark = output.find(CODEX_TRUNCATED_MARK, 0, CODEX_HEADER_CHARS)
    return max(HEAD_CHARS, mark + len(CODEX_TRUNCATED_MARK)) if mark >= 0 else HEAD_CHARS


class Outputs:
    """The long outputs of one rollout that were kept measured: the line each came from (its byte
    span, so that it can be decoded again) and whether its text holds a truncation marker."""

    def __init__(self, path: Path, marked: Callable[[str], bool]):
        self.path = path
        self._marked = marked
        self._lines: dict[int, tuple[int, int, bool]] = {}  # id of a MeasuredText -> (start, end, marked)

    def __bool__(self) -> bool:
        return bool(self._lines)

    def measure(self, item: dict, line: tuple[int, int] | None) -> None:
        """Keep `item`'s long string output measured, if its line alone holds it (`line`: its byte span)."""
        output = item.get("output")
        if line is None or type(output) is not str or len(output) < MEASURE_FROM:
            return
        if output.startswith(SENTINEL_PREFIXES) and not output.startswith(CODEX_EXEC_HEADER):
            return  # another agent's header, parsed whole; Codex's own is read from its first CODEX_HEADER_CHARS
        measured = MeasuredText(output[:_head_length(output)], js_len(output))
        self._lines[id(measured)] = (*line, self._marked(output))
        item["output"] = measured

    def marked(self, text: str) -> bool:
        """Whether `text` (a kept output, measured or whole) holds a truncation marker."""
        kept = self._lines.get(id(text)) if type(text) is MeasuredText else None
        return kept[2] if kept is not None else self._marked(text)

    def restored(self, contents: Iterable[dict], envelope: Callable[[dict], tuple]) -> Iterator[dict]:
        """`contents` with every measured output decoded again from its line (`envelope` takes the item
        out of the line's record, as the first read did)."""
        with open(self.path, "rb") as file:
            for content in contents:
                parts = content["parts"]
                if not any(self._measured_key(part) for part in parts):
                    yield content
                    continue
                yield {**content, "parts": [self._restored(part, file.fileno(), envelope) for part in parts]}

    def _measured_key(self, part: dict) -> str | None:
        response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict):
            for key in _RESPONSE_KEYS:
                if type(response.get(key)) is MeasuredText and id(response[key]) in self._lines:
                    return key
        return None

    def _restored(self, part: dict, descriptor: int, envelope: Callable[[dict], tuple]) -> dict:
        key = self._measured_key(part)
        if key is None:
            return part
        function_response = part["functionResponse"]
        measured = function_response["response"][key]
        start, end, _ = self._lines[id(measured)]
        data = os.pread(descriptor, end - start, start)
        values = line_values(self.path, 0, data, memoryview(data), 0, len(data), True, [])
        item = envelope(values[0])[1] if len(values) == 1 and isinstance(values[0], dict) else None
        text = item.get("output") if isinstance(item, dict) else None
        if type(text) is not str or js_len(text) != measured.js_length or not text.startswith(measured):
            raise SourceError(self.path, "changed since it was read: read the session again")
        return {**part, "functionResponse": {**function_response, "response": {**function_response["response"], key: text}}}
