"""A chart frame written as SVG text: axes, ticks, bars, steps, lines and a legend.

The report's charts are bars, step histograms and lines on linear axes, so
they are written here as SVG elements directly. matplotlib drew them at
about 0.26 s a chart after a 0.5 s import, a quarter of a small run's time
(docs/results.md); a string costs milliseconds. Coordinates are rounded to a
tenth of a pixel, so a report rebuilt from the same stats is the same file.

Text stays text (selectable, searchable, read by the tests), in the page's
own font; a label's width is estimated from its length, which is all that
the margins need.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: Font size of ticks and labels, px; legends are a px smaller.
FONT = 11
#: A character's width in the page's sans-serif at ``FONT``, near enough to size a margin.
CHAR_WIDTH = 0.6 * FONT
#: A legend's line height, px, and its box's margin and padding.
LEGEND_ROW = FONT + 5
LEGEND_PAD = 6
#: The dash pattern of dashed lines.
DASH = ' stroke-dasharray="5,3"'
AXIS_COLOR = "#333333"
GRID_COLOR = "#e5e5e5"


def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round values in [low, high], at most ``count`` + 1 of them.

    The step is the smallest of 1, 2, 2.5 or 5 times a power of ten that is
    at least (high - low) / count.
    """
    if not high > low:
        high = low + 1.0
    raw = (high - low) / count
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def tick_labels(ticks: Sequence[float]) -> list[str]:
    """The ticks as text with as many decimals as their step needs (5000 -> "5,000")."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 6 and abs(round(step, decimals) - step) > 1e-9 * max(step, 1.0):
        decimals += 1
    return [f"{t:,.{decimals}f}" for t in ticks]


def _n(value: float) -> str:
    """A coordinate as short text: a tenth of a pixel."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def esc(value: Any) -> str:
    """A value as HTML text, quotes escaped (the report's sections use it too)."""
    return html.escape(str(value), quote=True)


def text_width(text: str, size: float = FONT) -> float:
    """A label's estimated width in px."""
    return len(text) * CHAR_WIDTH * size / FONT


@dataclass(frozen=True)
class LegendEntry:
    """A legend's line: its label, its color and how the series is drawn."""

    label: str
    color: str
    kind: str = "line"  # "line", "dashed" or "area"


@dataclass
class Frame:
    """A chart of ``width`` x ``height`` px whose plot area maps data ``x`` and ``y`` ranges.

    The margins hold the tick labels and axis titles; elements are added in
    the order they are drawn, and ``svg`` closes the chart.
    """

    width: float
    height: float
    x: tuple[float, float]
    y: tuple[float, float]
    left: float = 56.0
    right: float = 16.0
    top: float = 10.0
    bottom: float = 40.0
    parts: list[str] = field(default_factory=list)

    def px(self, x: float) -> float:
        """A data x as a pixel column."""
        low, high = self.x
        span = (high - low) or 1.0
        return self.left + (x - low) / span * (self.width - self.left - self.right)

    def py(self, y: float) -> float:
        """A data y as a pixel row (down the page)."""
        low, high = self.y
        span = (high - low) or 1.0
        return self.height - self.bottom - (y - low) / span * (self.height - self.top - self.bottom)

    # -- marks ----------------------------------------------------------

    def rect(self, x0: float, y0: float, x1: float, y1: float, color: str) -> None:
        """A filled box between two data corners."""
        left, right = sorted((self.px(x0), self.px(x1)))
        top, bottom = sorted((self.py(y0), self.py(y1)))
        self.parts.append(
            f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(right - left)}" '
            f'height="{_n(bottom - top)}" fill="{color}"/>'
        )

    def path(
        self,
        points: Sequence[tuple[float, float]],
        color: str,
        *,
        fill: bool = False,
        dashed: bool = False,
        width: float = 1.6,
    ) -> None:
        """A line through data points; ``fill``: the area under it, shaded."""
        if not points:
            return
        d = "M" + " L".join(f"{_n(self.px(x))},{_n(self.py(y))}" for x, y in points)
        style = f'stroke="{color}" stroke-width="{width}" stroke-linejoin="round"'
        if dashed:
            style += DASH
        filling = f'fill="{color}" fill-opacity="0.35"' if fill else 'fill="none"'
        self.parts.append(f'<path d="{d}" {filling} {style}/>')

    def dots(self, points: Sequence[tuple[float, float]], color: str, radius: float = 2.5) -> None:
        """A marker at each data point."""
        self.parts.extend(
            f'<circle cx="{_n(self.px(x))}" cy="{_n(self.py(y))}" r="{radius}" fill="{color}"/>'
            for x, y in points
        )

    def text(
        self, x: float, y: float, label: str, *, anchor: str = "start", size: float = FONT
    ) -> None:
        """Text at a pixel position (its baseline's middle third at ``y``)."""
        self.parts.append(
            f'<text x="{_n(x)}" y="{_n(y + size * 0.35)}" font-size="{size}" '
            f'text-anchor="{anchor}">{esc(label)}</text>'
        )

    # -- axes -----------------------------------------------------------

    def x_axis(self, ticks: Sequence[float], title: str, labels: Sequence[str] = ()) -> None:
        """The bottom axis: its line, ticks, their labels and its title."""
        base = self.height - self.bottom
        self.parts.append(self._line(self.left, base, self.width - self.right, base))
        for tick, label in zip(ticks, labels or tick_labels(ticks), strict=True):
            x = self.px(tick)
            self.parts.append(self._line(x, base, x, base + 4))
            self.text(x, base + 12, label, anchor="middle")
        self.text(
            (self.left + self.width - self.right) / 2, self.height - 9, title, anchor="middle"
        )

    def y_axis(self, ticks: Sequence[float], title: str = "", labels: Sequence[str] = ()) -> None:
        """The left axis: its line, ticks with faint grid lines, their labels and its title."""
        self.parts.append(self._line(self.left, self.top, self.left, self.height - self.bottom))
        for tick, label in zip(ticks, labels or tick_labels(ticks), strict=True):
            y = self.py(tick)
            if title:  # a value axis: grid lines across
                self.parts.append(self._line(self.left, y, self.width - self.right, y, GRID_COLOR))
            self.parts.append(self._line(self.left - 4, y, self.left, y))
            self.text(self.left - 6, y, label, anchor="end")
        if title:
            middle = (self.top + self.height - self.bottom) / 2
            self.parts.append(
                f'<text transform="translate(12,{_n(middle)}) rotate(-90)" font-size="{FONT}" '
                f'text-anchor="middle">{esc(title)}</text>'
            )

    def headroom(self, rows: int) -> float:
        """The y range's top over the data's top that keeps a legend of ``rows`` above the data.

        Multiply the data's highest y by it: the legend's box (``legend``)
        then sits in the plot area's top, where no mark reaches.
        """
        box = LEGEND_PAD + _legend_height(rows) + 4  # the box and a gap below it
        plot = self.height - self.top - self.bottom
        return 1.0 / max(0.3, 1.0 - box / plot)

    def legend(self, entries: Sequence[LegendEntry], corner: str = "left") -> None:
        """A boxed legend in the plot area's upper ``corner`` ("left" or "right")."""
        if not entries:
            return
        size = FONT - 1
        width = 34 + max(text_width(e.label, size) for e in entries)
        x = self.left + 8 if corner == "left" else self.width - self.right - 8 - width
        y = self.top + LEGEND_PAD
        self.parts.append(
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(width)}" '
            f'height="{_n(_legend_height(len(entries)))}" fill="white" fill-opacity="0.85" '
            'stroke="#cccccc"/>'
        )
        for i, entry in enumerate(entries):
            middle = y + LEGEND_PAD / 2 + LEGEND_ROW * (i + 0.5)
            if entry.kind == "area":
                self.parts.append(
                    f'<rect x="{_n(x + 6)}" y="{_n(middle - 4)}" width="18" height="8" '
                    f'fill="{entry.color}" fill-opacity="0.35" stroke="{entry.color}"/>'
                )
            else:
                dashed = entry.kind == "dashed"
                self.parts.append(
                    self._line(x + 6, middle, x + 24, middle, entry.color, 1.6, dashed=dashed)
                )
            self.text(x + 30, middle, entry.label, size=size)

    def svg(self, name: str) -> str:
        """The chart, closed, in the report's figure box."""
        body = "".join(self.parts)
        return (
            f'<div class="figure" id="figure-{esc(name)}"><svg width="{_n(self.width)}" '
            f'height="{_n(self.height)}" viewBox="0 0 {_n(self.width)} {_n(self.height)}" '
            f'role="img" font-family="system-ui, sans-serif" fill="{AXIS_COLOR}">'
            f"{body}</svg></div>"
        )

    @staticmethod
    def _line(
        x0: float,
        y0: float,
        x1: float,
        y1: float,
        color: str = AXIS_COLOR,
        width: float = 1.0,
        *,
        dashed: bool = False,
    ) -> str:
        return (
            f'<line x1="{_n(x0)}" y1="{_n(y0)}" x2="{_n(x1)}" y2="{_n(y1)}" '
            f'stroke="{color}" stroke-width="{width}"{DASH if dashed else ""}/>'
        )


def _legend_height(rows: int) -> float:
    """A legend box's height, px: its rows and its padding."""
    return LEGEND_ROW * rows + LEGEND_PAD
