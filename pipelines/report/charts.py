"""The report's charts: bars, step histograms and lines, written as inline SVG.

Each chart is a ``plot.Frame`` sized for its data; no URL, no script and no
font file is in them, and the same stats give the same text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paramine.pipelines.report.plot import (
    FONT,
    Frame,
    LegendEntry,
    nice_ticks,
    text_width,
)

PALETTE = {
    "kept": "#1f77b4",
    "aligned_sample": "#2ca02c",
    "mismatched": "#d62728",
    "pivot": "#9467bd",
    "candidate": "#ff7f0e",
    "bar": "#4c78a8",
    "drop": "#e45756",
}
LABELS = {
    "kept": "written pairs' candidates",
    "aligned_sample": "calibration sample (aligned)",
    "mismatched": "null: mismatched pairs",
}
#: A chart's width in px (the page is 1,100 px wide; two side by side in its grid).
WIDE, NARROW = 700, 500


def _value_axis(frame: Frame, top: float, title: str) -> None:
    """A y axis from 0 to ``top`` with round ticks, and the frame's y range set to hold them."""
    ticks = nice_ticks(0.0, top or 1.0, 5)
    frame.y = (0.0, max(top, ticks[-1]) or 1.0)
    frame.y_axis(ticks, title)


def funnel_chart(funnel: Mapping[str, Any]) -> str:
    labels = ["read"]
    values = [funnel["read"]]
    for stage in funnel["stages"]:
        labels.append(f"kept by {stage['stage']}")
        values.append(stage["kept"])
    labels.append("written")
    values.append(funnel["written"])
    row = 22
    top = max(values) * 1.15 or 1.0
    ticks = nice_ticks(0.0, top, 6)
    frame = Frame(
        WIDE,
        row * len(labels) + 50,
        (0.0, max(top, ticks[-1])),
        (len(labels) - 0.5, -0.5),  # the first label on top
        left=max(text_width(label) for label in labels) + 14,
    )
    for i, value in enumerate(values):
        frame.rect(0, i - 0.4, value, i + 0.4, PALETTE["bar"])
        frame.text(frame.px(value) + 4, frame.py(i), f"{value:,}", size=FONT - 1)
    frame.y_axis(range(len(labels)), labels=labels)
    frame.x_axis(ticks, "records (pairs of the last stage)")
    return frame.svg("funnel")


def _steps(edges: Sequence[float], heights: Sequence[float]) -> list[tuple[float, float]]:
    """A histogram's outline: up at its first edge, along each bin, down at its last."""
    points = [(edges[0], 0.0)]
    for i, height in enumerate(heights):
        points += [(edges[i], height), (edges[i + 1], height)]
    return [*points, (edges[-1], 0.0)]


def score_chart(cut: Mapping[str, Any], index: int) -> str:
    edges = cut["edges"]
    series = []
    for name, counts in cut["histograms"].items():
        total = sum(counts)
        if total:
            series.append((name, [c / total for c in counts], total))
    pad = (edges[-1] - edges[0]) * 0.03 or 0.05
    frame = Frame(WIDE, 340, (edges[0] - pad, edges[-1] + pad), (0.0, 1.0))
    rows = len(series) + (cut.get("value") is not None)
    top = max((max(s) for _, s, _ in series), default=1.0)
    _value_axis(frame, top * frame.headroom(rows), "share per bin")
    legend = []
    for name, shares, total in series:
        color = PALETTE.get(name, "#333333")
        area = name == "mismatched"
        frame.path(_steps(edges, shares), color, fill=area)
        legend.append(
            LegendEntry(
                f"{LABELS.get(name, name)} (n={total:,})", color, "area" if area else "line"
            )
        )
    if cut.get("value") is not None:
        value = cut["value"]
        label = f"cut {value:.4g}"
        if cut.get("expected_false_accept") is not None:
            label += f": {100 * cut['expected_false_accept']:.1f}% of mismatched pass"
        frame.path([(value, frame.y[0]), (value, frame.y[1])], "#000000", dashed=True, width=1.4)
        legend.append(LegendEntry(label, "#000000", "dashed"))
    frame.x_axis(nice_ticks(edges[0], edges[-1], 7), f"score ({cut.get('score', 'cosine')})")
    frame.legend(legend)
    return frame.svg(f"scores-{index}")


def bar_chart(histogram: Mapping[str, int], name: str, xlabel: str, color: str) -> str:
    xs = [int(k) for k in histogram]
    values = list(histogram.values())
    low, high = (min(xs), max(xs)) if xs else (0, 1)
    frame = Frame(NARROW, 280, (low - 0.7, high + 0.7), (0.0, 1.0))
    _value_axis(frame, 1.05 * max(values, default=1), "groups")
    for x, value in zip(xs, values, strict=True):
        frame.rect(x - 0.4, 0, x + 0.4, value, color)
    ticks = xs if xs and high - low < 20 else [t for t in nice_ticks(low, high) if t == int(t)]
    frame.x_axis(ticks, xlabel, [f"{int(t):,}" for t in ticks])
    return frame.svg(name)


def lengths_chart(lengths: Mapping[str, Any]) -> str:
    sides = []
    for side in ("pivot", "candidate"):
        hist = lengths[side]["histogram"]
        total = sum(hist.values())
        if total:
            points = [(int(k), v / total) for k, v in hist.items()]
            sides.append((side, points, total))
    xs = [x for _, points, _ in sides for x, _ in points] or [0, 1]
    pad = (max(xs) - min(xs)) * 0.03 or 0.5
    frame = Frame(WIDE, 300, (min(xs) - pad, max(xs) + pad), (0.0, 1.0))
    top = max((y for _, points, _ in sides for _, y in points), default=1.0)
    _value_axis(frame, top * frame.headroom(len(sides)), "share of sentences")
    legend = []
    for side, points, total in sides:
        frame.path(points, PALETTE[side])
        frame.dots(points, PALETTE[side])
        label = f"{side}s (n={total:,}, mean {lengths[side]['mean']:.3g})"
        legend.append(LegendEntry(label, PALETTE[side]))
    frame.x_axis(
        [t for t in nice_ticks(min(xs), max(xs)) if t == int(t)],
        f"{lengths['unit']} per sentence (last bin: {lengths['last_bin']})",
    )
    if any(lengths[s]["n"] for s in ("pivot", "candidate")):
        frame.legend(legend, "right")  # lengths fall to the right: the upper right is empty
    return frame.svg("lengths")
