"""Reader states that go on from where they stopped: what `doctor statusline` keeps between turns.

Each state holds one agent reader's pass over a transcript up to the last complete line, and
`feed` reads on from there. Claude: `ClaudeFileReader` (the file's thread and tallies so far).
Qwen: `TranscriptIndex`, pass 1's metadata (offsets, chain links, output lengths); its
history is re-read from the chain's lines, long outputs measured without being decoded, as
`doctor memory` does. So the state stays small when pickled, the long strings a Claude state
keeps (tool outputs, prompts) become `MeasuredText`: their head and JS length, all the retention
analysis reads of them. Text starting with a sentinel header is kept whole (its header is parsed).
"""

from __future__ import annotations

from pathlib import Path

from doctor.core.jsvalues import MeasuredText, js_len
from doctor.core.sentinels import SENTINEL_PREFIXES
from doctor.sources.base import LoadedSession

# Strings up to this long stay as they are; longer ones keep this many characters of head.
KEEP_CHARS = 1024


class ClaudeState:
    agent = "claude"

    def __init__(self, path: Path):
        from doctor.sources.claude.file import ClaudeFileReader

        self.reader = ClaudeFileReader(path)

    @property
    def offset(self) -> int:
        return self.reader.cursor.offset

    def feed(self, *, whole_lines_only: bool) -> None:
        self.reader.feed(whole_lines_only=whole_lines_only)
        file = self.reader.file
        for thread in (file.thread, file.sidechain):
            for content in thread.contents:
                _measure_parts(content.get("parts"))

    def session(self) -> LoadedSession:
        """The session so far. Names late results in place: call it last, after the state was saved."""
        from doctor.sources.claude import session_from_file

        return session_from_file(self.reader.finish())


class QwenState:
    agent = "qwen"

    def __init__(self, path: Path):
        from doctor.sources.qwen.transcript import TranscriptIndex

        self.index = TranscriptIndex(path)
        self.offset = 0
        self.lines = 0

    def feed(self, *, whole_lines_only: bool) -> None:
        from doctor.sources.qwen.transcript import extend_index

        self.offset, self.lines = extend_index(self.index, self.offset, self.lines, whole_lines_only=whole_lines_only)

    def session(self) -> LoadedSession:
        from doctor.sources.qwen import session_from_index

        return session_from_index(self.index)


STATES = {"claude": ClaudeState, "qwen": QwenState}


def _measure_parts(parts: object) -> None:
    """Cut the long texts, tool outputs and errors of `parts` to MeasuredText, in place."""
    for part in parts if type(parts) is list else ():
        if type(part) is not dict:
            continue
        text = part.get("text")
        if text is not None:
            part["text"] = _measured(text)
        fr = part.get("functionResponse")
        response = fr.get("response") if type(fr) is dict else None
        if type(response) is dict:
            for key in ("output", "error"):
                if key in response:
                    response[key] = _measured(response[key])


def _measured(value: object) -> object:
    if type(value) is not str or len(value) <= KEEP_CHARS or value.startswith(SENTINEL_PREFIXES):
        return value
    return MeasuredText(value[:KEEP_CHARS], js_len(value))
