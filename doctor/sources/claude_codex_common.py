"""What the Claude Code and Codex CLI readers share: both record tool calls and
results as separate records joined by an id, so both need the same pieces.

- `CallNames`: the call-id → tool-name join, tolerant of a result written before
  its call and honest about results whose call is missing;
- `Tally`: running figures for tool results that are *not* in the active
  history (dropped by compaction, cleared, in a sidechain), kept without payloads;
- `text_chars`: how much text a side-channel copy holds (`raw_text_chars`: the same,
  from the raw JSON of a line the C scan shortened);
- `history_summary`: the retention figures of a secondary history (a subagent,
  an inline sidechain), so callers see them beside, never inside, the main ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from doctor.core import rawjson
from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.jsvalues import js_len
from doctor.sources.base import SideChannelCopy, SourceIssue

# The tool name given to a result whose call is not in the file. An empty name is
# what Qwen's analyzer itself falls back to for a nameless functionResponse: the
# result is measured against the global threshold, and no made-up name ("unknown")
# can collide with a real tool's budget or per-tool row.
UNKNOWN_TOOL = ""


def result_text(fr: dict) -> str:
    """The output-or-error string of a functionResponse built here."""
    response = fr["response"]
    text = response.get("output")
    return response.get("error", "") if text is None else text


def side_copy(side_channel: dict[str, SideChannelCopy], kind: str) -> SideChannelCopy:
    """The tally of side-channel copies of `kind`, made on first use (readers add to it line by line,
    so it is looked up, not built and thrown away, each time)."""
    copy = side_channel.get(kind)
    if copy is None:
        copy = side_channel[kind] = SideChannelCopy(kind)
    return copy


def inline_data_part(mime_type: str | None, data: str) -> dict:
    return {"inlineData": {"mimeType": mime_type or "application/octet-stream", "data": data}}


def text_chars(value: object) -> int:
    """Text a side-channel copy holds: its strings' lengths in UTF-16 units, summed.

    Keys and JSON punctuation are not counted, so the figure compares directly
    with the model-visible chars; and walking the value costs nothing like
    re-serialising it (these copies are most of a Claude file's bytes).
    """
    kind = type(value)
    if kind is str or (kind is not dict and kind is not list):
        return _string_chars(value) if isinstance(value, str) else _walk_chars(value)
    total = 0
    pending = [value]
    pop, push = pending.pop, pending.append
    while pending:
        item = pop()
        for child in item.values() if type(item) is dict else item:
            kind = type(child)
            if kind is str:
                total += len(child) if child.isascii() else js_len(child)
            elif kind is dict or kind is list:
                push(child)
            elif isinstance(child, (str, dict, list)):  # subclasses: the general walk
                total += _walk_chars(child)
    return total


def raw_text_chars(raw, text: bytes, spans: tuple) -> int:
    """`text_chars` of the value a msgspec.Raw holds (0 for an absent one), `raw` decoded from `text`,
    the copy `rawjson.scan_record` made with `spans`. Raises ValueError where only the decoded value
    can tell (a key given twice in one object, an escaped key): the caller's exact path reads the line."""
    if not raw:
        return 0
    units = rawjson.copy_text_units(raw, text, spans)
    if units is None:
        raise ValueError("the raw count could differ from the decoded value's")
    return units


def _string_chars(text: str) -> int:
    return len(text) if text.isascii() else js_len(text)


def _walk_chars(value: object) -> int:
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            total += _string_chars(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return total


class CallNames:
    """Tool names by call id, resolved once the whole file has been read.

    A result normally follows its call, but records copied on resume or written
    out of order can put it first, so unresolved results are revisited at the end.
    """

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._pending: list[tuple[dict, int | None]] = []

    def remember(self, call_id: object, name: object) -> None:
        if isinstance(call_id, str) and isinstance(name, str):
            self._names.setdefault(call_id, name)

    def name_for(self, call_id: object) -> str | None:
        return self._names.get(call_id) if isinstance(call_id, str) else None

    def attach(self, fr: dict, line: int | None) -> None:
        """Set `fr["name"]` now, or once the file has been read."""
        name = self.name_for(fr.get("id"))
        if name is None:
            fr["name"] = UNKNOWN_TOOL
            self._pending.append((fr, line))
        else:
            fr["name"] = name

    def resolve(self, path: Path, issues: list[SourceIssue], what: str) -> None:
        """Name the results that came before their call; report the ones with no call at all."""
        for fr, line in self._pending:
            name = self.name_for(fr.get("id"))
            if name is not None:
                fr["name"] = name
                continue
            issues.append(SourceIssue(
                path, line, f"{what} {fr.get('id')!r} has no matching call in this file; counted with an empty tool name"))
        self._pending.clear()


@dataclass
class Tally:
    """Count and raw text size of tool results outside the active history, without their text."""

    count: int = 0
    raw_chars: int = 0
    largest_raw: int = 0
    calls: list = field(default_factory=list)  # call ids, to name the tools once the file is read

    def add(self, fr: dict, size: int | None = None) -> None:
        """One result; `size`, its JS length, when the caller has it already."""
        size = js_len(result_text(fr)) if size is None else size
        self.count += 1
        self.raw_chars += size
        self.largest_raw = max(self.largest_raw, size)
        self.calls.append(fr.get("id"))

    def absorb(self, other: "Tally") -> None:
        self.count += other.count
        self.raw_chars += other.raw_chars
        self.largest_raw = max(self.largest_raw, other.largest_raw)
        self.calls.extend(other.calls)

    def figures(self, names: CallNames) -> dict:
        per_tool = Counter(names.name_for(call_id) or UNKNOWN_TOOL for call_id in self.calls)
        return {"tool_results": self.count, "raw_chars": self.raw_chars,
                "largest_raw_chars": self.largest_raw, "per_tool": dict(per_tool)}


def history_summary(contents: list) -> dict:
    """Retention figures of a secondary history, in the same measure as the main one."""
    analysis = analyze_tool_result_retention(contents)
    return {
        "tool_results": analysis.stats.tool_result_count,
        "chars": analysis.stats.total_chars,
        "raw_chars": sum(result.raw_chars for result in analysis.results),
        "largest_chars": analysis.stats.largest_result_chars,
        "largest_raw_chars": max((result.raw_chars for result in analysis.results), default=0),
        "per_tool": dict(Counter(result.tool for result in analysis.results)),
        "errors": sum(result.is_error for result in analysis.results),
    }
