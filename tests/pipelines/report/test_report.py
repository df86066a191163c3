"""The run report as a reader sees it: report.html end to end, and the dataset's readers.

stats.json, the card and ``paramine report`` are tested beside their modules
(test_stats.py, test_card.py, test_build.py).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from paramine.pipelines.stages.cut.rules.calibration_report import borderline, score_histograms
from paramine.schemas.dataset import PAIRS_SCHEMA
from paramine.schemas.manifest import Manifest, read_manifest, write_manifest
from paramine.schemas.reader import read_pairs
from paramine.schemas.records import AlignedPair

from tests.browser import PAGE_WINDOW, find_chromium, render
from tests.pipelines.report.helpers import Page, mine_and_report, parse, parse_text


def assert_no_external_reference(text: str, page: Page) -> None:
    assert "http://" not in text and "https://" not in text
    for tag, name, value in page.attributes:
        if name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
            assert value.startswith(("#", "data:")), (tag, name, value)
    assert not re.search(r"""(src|href)\s*=\s*["']?//""", text)
    assert "url(http" not in text and "@import" not in text


@pytest.mark.pipeline
class TestReportPage:
    def test_sections_funnel_histogram_with_cut_groups_and_no_external_url(
        self, dataset: Path
    ) -> None:
        report = dataset / "report.html"
        page = parse(report)
        for section in ("funnel", "scores", "groups", "lengths", "samples", "run"):
            assert section in page.sections, section
        manifest = read_manifest(str(dataset))
        funnel_text = " ".join(page.sections["funnel"]["text"])
        assert f"{manifest.counts['ReadBitext']['in']:,}" in funnel_text
        assert "single_candidate" in funnel_text  # dropped by reason
        scores = page.sections["scores"]
        assert "svg" in scores["tags"] and "path" in scores["tags"]
        # The cut is drawn and labelled in the histogram (SVG text, not glyphs).
        assert any(t.startswith("cut 0") for t in scores["text"])
        groups = page.sections["groups"]
        assert groups["tags"].count("svg") == 2
        assert "distinct candidates in the group" in groups["text"]
        assert_no_external_reference(report.read_text(encoding="utf-8"), page)

    def test_calibrated_run_draws_the_null_and_the_pairs_around_the_cut(
        self, tmp_path: Path, tiny_model_dir: Path
    ) -> None:
        output, manifest = mine_and_report(tmp_path, tiny_model_dir, "--threshold", "auto")
        stats = json.loads((output / "stats.json").read_text(encoding="utf-8"))
        cut = stats["cuts"][0]
        assert cut["mode"] == "auto"
        recorded = manifest.threshold["histograms"]
        assert cut["histograms"]["mismatched"] == recorded["mismatched"]
        assert sum(recorded["mismatched"]) == manifest.threshold["mismatched"]["n"]
        assert cut["expected_false_accept"] == manifest.threshold["mismatched_kept"]
        below = manifest.threshold["borderline"]["below"]
        assert all(row["score"] < cut["value"] for row in below)
        page = parse(output / "report.html")
        text = " ".join(page.sections["scores"]["text"])
        assert "null: mismatched pairs" in text and "Just below the cut" in text


def test_score_histograms_share_bins_and_count_everything() -> None:
    hist = score_histograms(aligned_sample=[0.9, 0.95, 1.0], mismatched=[0.5, 0.6, 0.9, 0.7])
    assert len(hist["edges"]) == 41
    assert sum(hist["aligned_sample"]) == 3 and sum(hist["mismatched"]) == 4
    assert score_histograms() == {}


def test_borderline_takes_the_nearest_pairs_on_each_side() -> None:
    pairs = [AlignedPair(f"p{i}", f"c{i}", "en", "pl", "t", "f.tsv", i + 1) for i in range(6)]
    near = borderline(pairs, [0.1, 0.5, 0.79, 0.8, 0.95, 0.81], 0.8, n=2)
    assert [r["score"] for r in near["below"]] == [0.5, 0.79]
    assert [r["score"] for r in near["above"]] == [0.8, 0.81]
    assert near["below"][1]["line"] == 3


class TestDatasetReaders:
    @pytest.mark.pipeline
    def test_pandas_polars_and_duckdb_read_the_pairs(self, dataset: Path) -> None:
        import duckdb
        import pandas as pd
        import polars as pl

        rows = read_manifest(str(dataset)).rows.pairs
        files = str(dataset / "pairs" / "*.parquet")
        frame = pd.read_parquet(dataset / "pairs")
        assert len(frame) == rows
        # Attribute access reaches the column: "pivot" was DataFrame.pivot, a method.
        assert frame.pivot_sentence.str.len().min() > 0
        assert pl.read_parquet(files).height == rows
        got = duckdb.sql(f"SELECT count(DISTINCT pivot_sentence) FROM '{files}'").fetchall()
        assert got == [(5,)]

    def test_pairs_of_schema_1_are_read_with_the_new_column_name(self, tmp_path: Path) -> None:
        old = pa.schema(
            [
                pa.field("pivot", pa.string()) if f.name == "pivot_sentence" else f
                for f in PAIRS_SCHEMA
            ],
            metadata={"paramine.schema_version": "paramine.pairs/1"},
        )
        row = {
            "pair_id": "p1",
            "sentence_a": "Kot śpi.",
            "sentence_b": "Kot drzemie.",
            "lang": "pl",
            "pivot": "The cat sleeps.",
            "pivot_lang": "en",
            "score_a": 0.9,
            "score_b": 0.8,
            "group_size": 2,
            "corpus": "c",
        }
        (tmp_path / "pairs").mkdir()
        pq.write_table(pa.Table.from_pylist([row], schema=old), tmp_path / "pairs" / "a.parquet")
        manifest = Manifest(
            created_at="2026-01-01T00:00:00+00:00",
            code_version="test",
            options={},
            model={},
            threshold={},
            inputs=[],
            counts={},
            files={"pairs": ["pairs/a.parquet"], "rejects": []},
            rows={"pairs": 1, "rejects": 0},
            pairs_schema_version="paramine.pairs/1",
        )
        write_manifest(str(tmp_path), manifest)
        table, _ = read_pairs(str(tmp_path))
        assert table.schema.equals(PAIRS_SCHEMA, check_metadata=False)
        assert table.column("pivot_sentence").to_pylist() == ["The cat sleeps."]


# ---------------------------------------------------------------- browser

#: Share of a chart's box that must be drawn. Measured on this module's
#: dataset: 4.6% for the score histogram (a fixed cut, no null), 5.6% for the
#: sentence lengths' lines, 39-40% for the bars; on the demo 6.6% to 42%.
MIN_CHART_INK = 0.03


@pytest.fixture(scope="module")
def chromium() -> str:
    """Chromium, or a skip; in CI a failure, since .ci/run installs it."""
    found = find_chromium()
    if found is None:
        missing = "Chromium is not installed (apt-get install -y --no-install-recommends chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"{missing}, yet .ci/run installs it when missing: its install step failed, "
                "see the start of the CI log",
                pytrace=False,
            )
        pytest.skip(missing)
    return found


def figure_count(dom: str) -> int:
    page = parse_text(dom.encode("utf-8"))
    return sum(1 for attribute in page.attributes if attribute == ("div", "class", "figure"))


@pytest.mark.browser
def test_report_opens_in_chromium_without_errors_or_requests(
    chromium: str, dataset: Path, tmp_path: Path
) -> None:
    """The report loads without console errors or requests, and every chart is drawn."""
    shown = render(chromium, dataset / "report.html", tmp_path)
    assert '<section id="funnel">' in shown.dom  # the page was loaded and parsed
    assert shown.console == []
    assert shown.requests == []
    # Each figure is a box of drawn pixels where the screenshot differs from
    # the page with its SVGs hidden: a chart that is not drawn has no box.
    figures = figure_count(shown.dom)
    assert figures >= 5  # funnel, scores, group sizes and pairs per group, lengths
    assert len(shown.charts) == figures, (
        f"{figures} figures in the page, {len(shown.charts)} drawn in a screenshot of "
        f"{PAGE_WINDOW[0]}x{PAGE_WINDOW[1]} px (a figure below it is not in it): {shown.charts}"
    )
    for chart in shown.charts:
        assert chart.width >= 300 and chart.height >= 150, chart
        assert chart.ink >= MIN_CHART_INK, chart


@pytest.mark.browser
def test_a_blank_page_has_no_chart_and_no_ink(chromium: str, tmp_path: Path) -> None:
    """The check above fails on a blank page: nothing is drawn, so no chart is found."""
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><head></head><body></body></html>", encoding="utf-8")
    shown = render(chromium, page, tmp_path / "render")
    assert shown.console == [] and shown.requests == []
    assert figure_count(shown.dom) == 0
    assert shown.charts == [] and shown.ink == 0.0
