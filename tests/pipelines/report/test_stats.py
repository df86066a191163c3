"""Tests of pipelines/report/stats.py: stats.json holds the manifest's figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paramine.schemas.manifest import read_manifest
from paramine.schemas.reader import read_pairs
from paramine.schemas.run_counts import NOTES


@pytest.mark.pipeline
def test_stats_json_has_the_manifests_figures(dataset: Path) -> None:
    stats = json.loads((dataset / "stats.json").read_text(encoding="utf-8"))
    manifest = read_manifest(str(dataset))
    stages = {s["stage"]: s for s in stats["funnel"]["stages"]}
    for name, counts in manifest.counts.items():
        if name in NOTES:  # figures beside the ledgers
            continue
        assert stages[name]["in"] == counts["in"]
        assert stages[name]["kept"] == counts["kept"]
        assert stages[name]["dropped"] == counts["dropped"]
    assert stats["funnel"]["read"] == manifest.counts["ReadBitext"]["in"]
    # Lines no check could judge, by check and language (none in this English-Polish run).
    assert stats["funnel"]["unchecked"] == {} == manifest.counts.get("unchecked", {})
    assert stats["funnel"]["written"] == manifest.rows.pairs
    assert stats["line_checks"] == manifest.extra.line_checks
    assert stats["line_checks"]["candidate:pl"]["lines"] == manifest.counts["Prefilter"]["in"]
    assert stats["rows"] == manifest.rows.to_json()
    assert stats["cuts"][0]["value"] == manifest.threshold["value"] == 0.0
    table, _ = read_pairs(str(dataset))
    pivots = set(table.column("pivot_sentence").to_pylist())
    assert stats["groups"]["groups"] == len(pivots) == 5
    assert stats["groups"]["size_histogram"] == {"2": 4, "3": 1}
    assert stats["samples"]["rejects"]["column_count"][0]["line"] == 4
    assert stats["input_bytes"] == (dataset.parent / "bitext.en-pl.tsv").stat().st_size
    assert stats["timing"]["seconds"] > 0
