"""The report's charts: matplotlib figures drawn as inline SVG with no URL in them."""

from __future__ import annotations

import html
import io
import re
from collections.abc import Mapping
from typing import Any

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


_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_NAMESPACES = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


def svg_of(figure: Any, name: str) -> str:
    """The figure as inline SVG, reproducible and with no URL in it.

    The XML prolog, the DOCTYPE and the RDF metadata name w3.org and
    purl.org URLs; HTML's parser needs none of them (it knows the SVG
    namespace and ``xlink:href`` itself), so they are removed.
    """
    import matplotlib

    buffer = io.StringIO()
    # A fixed salt per figure: the same ids on every rebuild, different ids
    # between the figures of one page.
    with matplotlib.rc_context({"svg.hashsalt": name, "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = _PROLOG.sub("", text)
    text = _METADATA.sub("", text)
    text = _NAMESPACES.sub("", text)
    return f'<div class="figure" id="figure-{html.escape(name, quote=True)}">{text}</div>'


def _figure(width: float = 7.0, height: float = 3.2) -> Any:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    figure.set_layout_engine("constrained")
    return figure


def funnel_chart(funnel: Mapping[str, Any]) -> str:
    labels = ["read"]
    values = [funnel["read"]]
    for stage in funnel["stages"]:
        labels.append(f"kept by {stage['stage']}")
        values.append(stage["kept"])
    labels.append("written")
    values.append(funnel["written"])
    figure = _figure(7.0, 0.45 * len(labels) + 0.8)
    axes = figure.add_subplot()
    positions = list(range(len(labels)))[::-1]
    axes.barh(positions, values, color=PALETTE["bar"])
    axes.set_yticks(positions, labels)
    for y, v in zip(positions, values, strict=True):
        axes.text(v, y, f" {v:,}", va="center", fontsize=9)
    axes.set_xlabel("records (pairs of the last stage)")
    axes.margins(x=0.15)
    return svg_of(figure, "funnel")


def score_chart(cut: Mapping[str, Any], index: int) -> str:
    edges = cut["edges"]
    figure = _figure(7.0, 3.4)
    axes = figure.add_subplot()
    for name, counts in cut["histograms"].items():
        total = sum(counts)
        if not total:
            continue
        shares = [c / total for c in counts]
        axes.stairs(
            shares,
            edges,
            fill=name == "mismatched",
            alpha=0.35 if name == "mismatched" else 1.0,
            color=PALETTE.get(name, "#333333"),
            label=f"{LABELS.get(name, name)} (n={total:,})",
            linewidth=1.6,
        )
    if cut.get("value") is not None:
        value = cut["value"]
        label = f"cut {value:.4g}"
        if cut.get("expected_false_accept") is not None:
            label += f": {100 * cut['expected_false_accept']:.1f}% of mismatched pass"
        axes.axvline(value, color="black", linestyle="--", linewidth=1.4, label=label)
    axes.set_xlabel(f"score ({cut.get('score', 'cosine')})")
    axes.set_ylabel("share per bin")
    axes.legend(fontsize=8, loc="upper left")
    return svg_of(figure, f"scores-{index}")


def bar_chart(histogram: Mapping[str, int], name: str, xlabel: str, color: str) -> str:
    figure = _figure(5.0, 2.8)
    axes = figure.add_subplot()
    xs = [int(k) for k in histogram]
    axes.bar(xs, list(histogram.values()), color=color, width=0.8)
    axes.set_xlabel(xlabel)
    axes.set_ylabel("groups")
    if xs and max(xs) - min(xs) < 20:
        axes.set_xticks(xs)
    return svg_of(figure, name)


def lengths_chart(lengths: Mapping[str, Any]) -> str:
    figure = _figure(7.0, 3.0)
    axes = figure.add_subplot()
    for side in ("pivot", "candidate"):
        hist = lengths[side]["histogram"]
        total = sum(hist.values())
        if total:
            xs = [int(k) for k in hist]
            axes.plot(
                xs,
                [v / total for v in hist.values()],
                marker="o",
                markersize=3,
                color=PALETTE[side],
                label=f"{side}s (n={total:,}, mean {lengths[side]['mean']:.3g})",
            )
    axes.set_xlabel(f"{lengths['unit']} per sentence (last bin: {lengths['last_bin']})")
    axes.set_ylabel("share of sentences")
    if any(lengths[s]["n"] for s in ("pivot", "candidate")):
        axes.legend(fontsize=8)
    return svg_of(figure, "lengths")
