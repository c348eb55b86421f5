"""Reader states that go on from where they stopped: what `doctor statusline` keeps between turns.

Each state holds one agent reader's pass over a transcript up to the last complete line, and
`feed` reads on from there. Claude: `ClaudeFileReader` (the file's thread and tallies so far).
Qwen: `TranscriptIndex`, pass 1's metadata (offsets, chain links, output lengths); its
history is re-read from the chain's lines, long outputs measured without being decoded, as
`doctor memory` does. So the state stays small when pickled, the long strings a Claude state
keeps (tool outputs, prompts) become `MeasuredText`: their head and JS length, all the retention
analysis reads of them. Text starting with a sentinel header keeps its first 1,024 characters:
the header the analysis parses (spill path, sizes); the status line's figures need no more.
"""

from __future__ import annotations

from pathlib import Path

from doctor.core.jsvalues import MeasuredText, js_len
from doctor.core.sentinels import SENTINEL_PREFIXES
from doctor.sources.base import LoadedSession

# Strings up to this long stay as they are; longer ones keep this many characters of head (a text
# starting with a sentinel header keeps more: the header, which names the spill file and sizes).
KEEP_CHARS = 256
SENTINEL_KEEP_CHARS = 1024


class ClaudeState:
    agent = "claude"

    def __init__(self, path: Path):
        from doctor.sources.claude.file import ClaudeFileReader

        self.reader = ClaudeFileReader(path)
        self._measured: list[tuple[list, int]] = []  # per thread: its contents list, Contents cut so far

    @property
    def offset(self) -> int:
        return self.reader.cursor.offset

    def feed(self, *, whole_lines_only: bool) -> None:
        self.reader.feed(whole_lines_only=whole_lines_only)
        file = self.reader.file
        cut: dict[int, MeasuredText] = {}  # id of a long string -> what replaced it, to share it
        measured = []
        for number, thread in enumerate((file.thread, file.sidechain)):
            contents = thread.contents
            # Only Contents added since the last feed and the two before (a streamed model message and
            # the results after it take more parts); a compact boundary gives a new list, walked whole.
            # A string left uncut is only a bigger index: what is measured stays exact.
            seen = self._measured[number] if number < len(self._measured) else (None, 0)
            start = max(0, seen[1] - 2) if seen[0] is contents else 0
            for content in contents[start:]:
                _measure_parts(content.get("parts"), cut)
            measured.append((contents, len(contents)))
        self._measured = measured
        if cut:  # persisted-output stubs are also listed with their text: the same, now shorter, string
            file.stubs = [(fr, cut.get(id(text), text), boundaries) for fr, text, boundaries in file.stubs]

    def session(self) -> LoadedSession:
        """The session so far. Names late results in place: call it last, after the state was saved."""
        from doctor.sources.claude import session_from_file

        session = session_from_file(self.reader.finish(), details=False)
        contents = self.reader.file.thread.contents
        # The list itself, not an iterator over it: the analysis then parses a stub's header only for
        # rows someone reads (none, for the status line's figures), not for every stub during the pass.
        session.measured_history = lambda: contents
        return session


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


def _measure_parts(parts: object, cut: dict) -> None:
    """Cut the long texts, tool outputs and errors of `parts` to MeasuredText, in place."""
    for part in parts if type(parts) is list else ():
        if type(part) is not dict:
            continue
        if "text" in part:
            part["text"] = _measured(part["text"], cut)
        fr = part.get("functionResponse")
        response = fr.get("response") if type(fr) is dict else None
        if type(response) is dict:
            for key in ("output", "error"):
                if key in response:
                    response[key] = _measured(response[key], cut)


def _measured(value: object, cut: dict) -> object:
    if type(value) is not str or len(value) <= KEEP_CHARS:
        return value
    keep = SENTINEL_KEEP_CHARS if value.startswith(SENTINEL_PREFIXES) else KEEP_CHARS
    if len(value) <= keep:
        return value
    measured = cut[id(value)] = MeasuredText(value[:keep], js_len(value))
    return measured
