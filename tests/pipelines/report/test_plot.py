"""The SVG chart frame: round ticks, data mapped onto the plot area, well-formed output."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from paramine.pipelines.report.plot import Frame, LegendEntry, nice_ticks, tick_labels


@pytest.mark.parametrize(
    ("low", "high", "count", "expected"),
    [
        (0.0, 30_258.8, 6, [0, 10_000, 20_000, 30_000]),
        (0.0, 30_258.8, 7, [0, 5_000, 10_000, 15_000, 20_000, 25_000, 30_000]),
        (0.83, 1.1, 5, [0.9, 1.0, 1.1]),
        (0.83, 1.1, 7, [0.85, 0.9, 0.95, 1.0, 1.05, 1.1]),
        (0.0, 0.146, 5, [0.0, 0.05, 0.1]),
        (1.0, 21.0, 6, [5.0, 10.0, 15.0, 20.0]),
        (0.0, 0.12, 5, [0.0, 0.025, 0.05, 0.075, 0.1]),
    ],
)
def test_ticks_are_the_smallest_round_step_that_makes_at_most_count_of_them(
    low: float, high: float, count: int, expected: list[float]
) -> None:
    """A step of 1, 2, 2.5 or 5 times a power of ten, at least (high - low) / count."""
    assert nice_ticks(low, high, count) == pytest.approx(expected)


@pytest.mark.parametrize(("low", "high"), [(3.0, 3.0), (2.0, 1.0)])
def test_an_empty_range_still_gets_ticks(low: float, high: float) -> None:
    ticks = nice_ticks(low, high)
    assert len(ticks) >= 2 and ticks == sorted(ticks)


def test_tick_labels_carry_the_decimals_of_their_step() -> None:
    assert tick_labels([0, 5_000, 10_000]) == ["0", "5,000", "10,000"]
    assert tick_labels([0.85, 0.9, 0.95]) == ["0.85", "0.90", "0.95"]
    assert tick_labels([0.0, 0.025, 0.05]) == ["0.000", "0.025", "0.050"]
    assert tick_labels([7.0]) == ["7"]


def test_the_frame_maps_its_ranges_onto_the_plot_area() -> None:
    frame = Frame(700, 300, (10.0, 20.0), (0.0, 2.0), left=50, right=10, top=10, bottom=40)
    assert (frame.px(10.0), frame.px(20.0), frame.px(15.0)) == (50, 690, 370)
    assert (frame.py(0.0), frame.py(2.0), frame.py(1.0)) == (260, 10, 135)
    upside_down = Frame(700, 300, (0.0, 1.0), (4.5, -0.5), top=10, bottom=40)
    assert upside_down.py(-0.5) == 10 and upside_down.py(4.5) == 260


def test_marks_are_well_formed_svg_with_their_text_escaped() -> None:
    frame = Frame(400, 200, (0.0, 4.0), (0.0, 1.0))
    frame.rect(0.5, 0.0, 1.5, 0.5, "#4c78a8")
    frame.path([(0.0, 0.0), (1.0, 1.0)], "#d62728", fill=True)
    frame.dots([(2.0, 0.5)], "#ff7f0e")
    frame.x_axis([0.0, 2.0, 4.0], "words < 5 & more")
    frame.y_axis([0.0, 0.5, 1.0], "share")
    frame.legend([LegendEntry("a <b>", "#000000", "dashed"), LegendEntry("c", "#111111", "area")])
    text = frame.svg("x&y")
    root = ET.fromstring(text)  # well-formed: every mark closed, every text escaped
    svg = root.find("svg")
    assert root.get("id") == "figure-x&y" and svg is not None
    assert "http" not in text  # no namespace URL: HTML's parser knows SVG
    labels = [t.text for t in svg.iter("text")]
    assert "words < 5 & more" in labels and "a <b>" in labels and "share" in labels
    assert labels[:3] == ["0", "2", "4"]
    (bar,) = [r for r in svg.iter("rect") if r.get("fill") == "#4c78a8"]
    assert float(bar.get("width", 0)) == pytest.approx(frame.px(1.5) - frame.px(0.5), abs=0.1)
    assert frame.svg("x&y") == text  # the same marks, the same text
