"""Which Codex tool outputs are kept measured (doctor/sources/measured_outputs.py), and how much of each.

A rollout's `function_call_output` texts are most of what a long session holds: 13 M characters per
100 MB in the benchmark's rollouts, 660 MiB at the peak for a 1 GB rollout when kept whole. Codex's exec
header is judged on its first CODEX_HEADER_CHARS (the truncation mark), so the head kept reaches past
the mark when the mark is there; the in-place truncation markers anywhere in the text are looked for
while the text is at hand, and noted with it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from doctor.core.sentinels import CODEX_EXEC_HEADER, CODEX_HEADER_CHARS, CODEX_TRUNCATED_MARK, SENTINEL_PREFIXES
from doctor.sources.codex.lines import envelope
from doctor.sources.measured_outputs import MeasuredOutputs

# Outputs shorter than this are kept whole: measuring them saves little.
MEASURE_FROM = CODEX_HEADER_CHARS
HEAD_CHARS = 256  # every sentinel prefix is shorter


class Outputs(MeasuredOutputs):
    """A rollout's long outputs kept measured; each notes whether its text holds a truncation marker."""

    def __init__(self, path: Path, marked: Callable[[str], bool]):
        super().__init__(path, _output_in_record, utf8=True)  # Codex's measure counts bytes
        self._marked = marked

    def measure(self, item: dict, line: tuple[int, int] | None) -> None:
        """Keep `item`'s long string output measured, if its line alone holds it (`line`: its byte span)."""
        output = item.get("output")
        if line is None or type(output) is not str or len(output) < MEASURE_FROM:
            return
        if output.startswith(SENTINEL_PREFIXES) and not output.startswith(CODEX_EXEC_HEADER):
            return  # another agent's header, parsed whole
        item["output"] = self.keep(output, _head_length(output), line, self._marked(output))

    def marked(self, text: str) -> bool:
        """Whether `text` (a kept output, measured or whole) holds a truncation marker."""
        noted = self.where(text)
        return noted if noted is not None else self._marked(text)


def _head_length(output: str) -> int:
    """HEAD_CHARS, or up to the end of Codex's truncation mark when the mark is in the first
    CODEX_HEADER_CHARS (where `sentinel_kind` looks for it; a head without it tells the same: not
    there). 1,024 characters a head, at 4 bytes each once an astral one is in it, were 55 MB of a 1 GB rollout."""
    mark = output.find(CODEX_TRUNCATED_MARK, 0, CODEX_HEADER_CHARS)
    return max(HEAD_CHARS, mark + len(CODEX_TRUNCATED_MARK)) if mark >= 0 else HEAD_CHARS


def _output_in_record(record: object, _where: object) -> object:
    item = envelope(record)[1] if isinstance(record, dict) else None
    return item.get("output") if isinstance(item, dict) else None
