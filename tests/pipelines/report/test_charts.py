"""The report's charts draw their figures where the axes say, from the stats alone."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from paramine.pipelines.report.charts import (
    PALETTE,
    bar_chart,
    funnel_chart,
    lengths_chart,
    score_chart,
)

FUNNEL = {
    "read": 26_312,
    "stages": [{"stage": "ReadBitext", "kept": 26_312}, {"stage": "Prefilter", "kept": 7_139}],
    "written": 1_936,
}


def svg(text: str) -> ET.Element:
    element = ET.fromstring(text).find("svg")
    assert element is not None
    return element


def texts(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter("text")]


def test_funnel_bars_are_as_long_as_their_counts_and_labelled() -> None:
    chart = svg(funnel_chart(FUNNEL))
    bars = [r for r in chart.iter("rect") if r.get("fill") == PALETTE["bar"]]
    widths = [float(r.get("width", 0)) for r in bars]
    assert len(widths) == 4
    assert widths[2] / widths[0] == pytest.approx(7_139 / 26_312, rel=1e-3)
    assert [float(r.get("y", 0)) for r in bars] == sorted(float(r.get("y", 0)) for r in bars)
    labels = texts(chart)
    assert {"read", "kept by Prefilter", "written", "26,312", "1,936"} <= set(labels)


def test_the_score_chart_draws_each_histogram_as_shares_and_the_cut_where_it_is() -> None:
    cut = {
        "edges": [0.8, 0.9, 1.0, 1.1],
        "histograms": {"kept": [0, 1, 3], "mismatched": [6, 2, 0], "aligned_sample": [0, 0, 0]},
        "value": 0.95,
        "expected_false_accept": 0.02,
        "score": "margin",
    }
    chart = svg(score_chart(cut, 0))
    paths = {p.get("stroke"): p for p in chart.iter("path")}
    assert set(paths) == {PALETTE["kept"], PALETTE["mismatched"], "#000000"}  # empty one left out
    assert paths[PALETTE["mismatched"]].get("fill") == PALETTE["mismatched"]
    assert paths[PALETTE["kept"]].get("fill") == "none"
    # The kept outline's top steps stand at the shares 0.25 and 0.75, in the axes' rows.
    points = [
        tuple(map(float, p.split(",")))
        for p in re.findall(r"[\d.]+,[\d.]+", paths[PALETTE["kept"]].get("d", ""))
    ]
    rows = sorted({y for _, y in points})
    bottom, second, top = rows[-1], rows[1], rows[0]
    assert (bottom - second) / (bottom - top) == pytest.approx(0.25 / 0.75, rel=1e-2)
    cut_x = {x for x, _ in re.findall(r"([\d.]+),([\d.]+)", paths["#000000"].get("d", ""))}
    assert len(cut_x) == 1  # a vertical line
    edge_x = sorted({x for x, _ in points})
    assert float(cut_x.pop()) == pytest.approx((edge_x[1] + edge_x[2]) / 2, abs=0.2)
    # The legend sits above every histogram's top: no mark runs under it.
    (box,) = [r for r in chart.iter("rect") if r.get("fill") == "white"]
    below = float(box.get("y", 0)) + float(box.get("height", 0))
    for color in (PALETTE["kept"], PALETTE["mismatched"]):
        heights = re.findall(r"[\d.]+,([\d.]+)", paths[color].get("d", ""))
        assert min(float(y) for y in heights) > below, color
    labels = texts(chart)
    assert "cut 0.95: 2.0% of mismatched pass" in labels
    assert "written pairs' candidates (n=4)" in labels and "score (margin)" in labels


def test_bar_and_lengths_charts_with_no_data_still_draw_their_axes() -> None:
    bars = svg(bar_chart({}, "group-sizes", "candidates", PALETTE["bar"]))
    assert "candidates" in texts(bars) and not [r for r in bars.iter("rect")]
    empty = {"n": 0, "histogram": {}, "mean": 0.0}
    lengths = svg(
        lengths_chart({"pivot": empty, "candidate": empty, "unit": "words", "last_bin": "60+"})
    )
    assert "words per sentence (last bin: 60+)" in texts(lengths)
    assert not list(lengths.iter("path"))


def test_bars_stand_on_their_integer_keys() -> None:
    chart = svg(bar_chart({"2": 10, "3": 5, "5": 1}, "g", "size", "#123456"))
    bars = sorted(
        (float(r.get("x", 0)), float(r.get("height", 0)))
        for r in chart.iter("rect")
        if r.get("fill") == "#123456"
    )
    assert [h / bars[0][1] for _, h in bars] == pytest.approx([1.0, 0.5, 0.1], rel=1e-2)
    step = bars[1][0] - bars[0][0]
    assert bars[2][0] - bars[1][0] == pytest.approx(2 * step, abs=0.2)
    assert {"2", "3", "5"} <= set(texts(chart))
