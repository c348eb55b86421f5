"""Bar charts as inline SVG, for the HTML reports: no script, no external resource, text as text.

A chart is data (`Chart`: labels and values) until the HTML renderer draws it, so the
same block can be laid out in any report and checked without a browser. Labels are
escaped like every other string; the page's Content Security Policy stays script-free.
Histograms put sizes on a log scale by binning them first (`doctor.triage.bins`), each bar one bin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 560, 220
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 28, 52
BAR = "#3b82f6"
AXIS = "#57606a"


@dataclass(frozen=True)
class Chart:
    """A titled bar chart: one bar per label, heights proportional to values (linear from 0)."""

    title: str
    labels: tuple[str, ...]
    values: tuple[float, ...]
    x_label: str = ""
    y_label: str = ""
    slug: str = "chart"


def _ticks(top: float) -> list[float]:
    if top <= 0:
        return [0]
    step = 10 ** math.floor(math.log10(top))
    for factor in (1, 2, 5, 10):
        if top / (step * factor) <= 5:
            step *= factor
            break
    return [step * i for i in range(int(top // step) + 1)]


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def svg(chart: Chart) -> str:
    """The chart as one <svg> element (role img, with a <title> for screen readers)."""
    count = max(len(chart.values), 1)
    top = max(chart.values, default=0) or 1
    slot = (WIDTH - LEFT - RIGHT) / count
    slanted = max((len(label) for label in chart.labels), default=0) * 6 > slot  # labels would overlap
    bottom = BOTTOM + (40 if slanted else 0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - bottom
    # No width or height: the viewBox alone lets the page scale the chart to its column (html.py's CSS).
    parts = [f'<svg class="chart" id="{escape(chart.slug)}" role="img" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="xMinYMin meet">',
             f"<title>{escape(chart.title)}</title>",
             f'<text x="{LEFT}" y="16" font-size="13" font-weight="600" fill="#1f2328">{escape(chart.title)}</text>']
    for tick in _ticks(top):
        y = TOP + plot_h - plot_h * tick / top
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d0d7de"/>')
        parts.append(f'<text x="{LEFT - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end" fill="{AXIS}">'
                     f"{_number(tick)}</text>")
    for index, (label, value) in enumerate(zip(chart.labels, chart.values)):
        height = plot_h * value / top
        x = LEFT + index * slot
        parts.append(f'<rect class="bar" x="{x + slot * 0.1:.1f}" y="{TOP + plot_h - height:.1f}" '
                     f'width="{slot * 0.8:.1f}" height="{height:.1f}" fill="{BAR}">'
                     f"<title>{escape(label)}: {_number(value)}</title></rect>")
        centre, below = x + slot / 2, TOP + plot_h + 14
        turn = f' transform="rotate(-35 {centre:.1f} {below})"' if slanted else ""
        parts.append(f'<text class="label" x="{centre:.1f}" y="{below}" font-size="10" '
                     f'text-anchor="{"end" if slanted else "middle"}" fill="{AXIS}"{turn}>{escape(label)}</text>')
    parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="{AXIS}"/>')
    if chart.x_label:
        parts.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle" '
                     f'fill="{AXIS}">{escape(chart.x_label)}</text>')
    if chart.y_label:
        parts.append(f'<text x="12" y="{TOP + plot_h / 2:.1f}" font-size="11" text-anchor="middle" fill="{AXIS}" '
                     f'transform="rotate(-90 12 {TOP + plot_h / 2:.1f})">{escape(chart.y_label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
