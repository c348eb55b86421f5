"""Numbers and cells for the screens: rich `Text` built from plain strings, never markup.

Tool names, paths and outputs come from the session; building `Text(str)` (not
`Text.from_markup`) is what keeps `[bold]` or escape sequences in them inert.
"""

from __future__ import annotations

import math

from rich.console import Group
from rich.measure import Measurement
from rich.padding import Padding
from rich.text import Text

from doctor.report.inert import inert as _inert_report


def inert(text: str) -> str:
    """Tool output made plain for a screen: escapes dropped, controls visible, tabs as four spaces."""
    return _inert_report(text).replace("\t", "    ")


def num(value: float | None) -> str:
    """A count, char figure or budget: 12,345; ∞ for no budget; – when unknown."""
    if value is None:
        return "–"
    if isinstance(value, float) and not math.isfinite(value):
        return "∞"
    return f"{int(value):,}"


def size(byte_count: int | None) -> str:
    if byte_count is None:
        return "–"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if byte_count >= scale:
            return f"{byte_count / scale:.1f} {unit}"
    return f"{byte_count} B"


def plain(text: object, style: str = "") -> Text:
    """Session-provided text as an inert Text (controls made visible)."""
    return Text(inert(str(text)), style=style, no_wrap=True, overflow="ellipsis")


class SortableText(Text):
    """A table cell that sorts by its number, not its rendering (memray's trick)."""

    def __init__(self, text: str, value, style: str = "", justify: str = "right") -> None:
        super().__init__(text, style=style, justify=justify)
        self.value = value

    def __lt__(self, other: object) -> bool:
        other_value = other.value if isinstance(other, SortableText) else other
        try:
            return self.value < other_value
        except TypeError:
            return str(self.value) < str(other_value)


def number_cell(value, style: str = "") -> SortableText:
    key = -1 if value is None else (math.inf if isinstance(value, float) and math.isinf(value) else value)
    return SortableText(num(value), key, style)


def text_cell(value: str, style: str = "") -> SortableText:
    cell = SortableText(inert(value), value.lower(), style, justify="left")
    cell.no_wrap = True
    cell.overflow = "ellipsis"
    return cell


def bar(fraction: float, width: int) -> str:
    """A horizontal bar of eighth blocks, `fraction` of `width` cells."""
    fraction = max(0.0, min(1.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + ("" if rest == 0 else " ▏▎▍▌▋▊▉"[rest])


def indented(text: Text) -> Group:
    """`text` line by line, each wrapped line kept at its own indent (Text wraps back to column 0).

    Qwen's retention lines are indented two spaces; at 80 columns a long one wrapped to the
    panel's edge and read like a new heading.
    """
    rows = []
    for line in text.split("\n"):
        indent = len(line.plain) - len(line.plain.lstrip(" "))
        rows.append(Padding(line[indent:], (0, 0, 0, indent)) if indent else line)
    return Group(*rows)


class PathText:
    """A path that wraps after a `/` (Rich folds a path, which has no spaces, mid-name).

    Inert like `plain`; a single part longer than the width is folded as a last resort.
    """

    def __init__(self, path: str, style: str = "") -> None:
        self.text = inert(path)
        self.style = style

    def _parts(self) -> list[str]:
        parts = self.text.split("/")
        return [part + "/" for part in parts[:-1]] + [parts[-1]] if len(parts) > 1 else parts

    def __rich_measure__(self, console, options) -> Measurement:
        return Measurement(max((len(part) for part in self._parts()), default=1), max(1, len(self.text)))

    def __rich_console__(self, console, options):
        width = max(1, options.max_width)
        lines, current = [], ""
        for part in self._parts():
            if current and len(current) + len(part) > width:
                lines.append(current)
                current = ""
            current += part
            while len(current) > width:
                lines.append(current[:width])
                current = current[width:]
        lines.append(current)
        yield Text("\n".join(lines), style=self.style)
