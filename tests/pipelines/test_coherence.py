"""Group coherence: an outlier of a group is dropped, a coherent group is kept."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.coherence import CoherenceFilter, coherence_cut, outliers
from paramine.pipelines.config import MineConfig
from paramine.pipelines.mine import run
from paramine.schemas.errors import UsageError
from paramine.schemas.records import AlignedPair, ScoredPair


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype="float32")
    return vector / np.linalg.norm(vector)


def scored(pivot: str, candidate: str, vector: np.ndarray | None = None) -> ScoredPair:
    pair = AlignedPair(pivot, candidate, "en", "pl", "fixture", "mem://bitext", 1)
    return ScoredPair(pair, 0.9, candidate_vector=vector)


# Three candidates of "I smoke." close together, and one unrelated line.
VECTORS = {
    "Palę.": unit(1.0, 0.1, 0.0, 0.0),
    "Ja palę.": unit(1.0, 0.15, 0.05, 0.0),
    "Palę papierosy.": unit(0.95, 0.2, 0.0, 0.05),
    "Pociąg się spóźnił.": unit(0.1, 0.0, 1.0, 0.3),
    # A coherent group of two: never checked.
    "Dobranoc.": unit(0.0, 1.0, 0.0, 0.0),
    "Spokojnej nocy.": unit(0.0, 0.0, 0.0, 1.0),
}


def test_outliers_are_rows_far_from_every_other() -> None:
    matrix = np.stack([VECTORS[t] for t in ("Palę.", "Ja palę.", "Pociąg się spóźnił.")])
    assert outliers(matrix, 0.8).tolist() == [False, False, True]
    # With a cut below every cosine nothing is an outlier.
    assert not outliers(matrix, -1.0).any()


def test_the_coherence_cut_comes_from_unrelated_candidates() -> None:
    rng = np.random.default_rng(7)
    sample = [
        scored(f"pivot {i}", f"candidate {i}", unit(*rng.normal(size=16))) for i in range(300)
    ]
    cut = coherence_cut(sample, 0.02)
    # Random 16-d unit vectors: the 98th percentile of their cosines, about 2 / sqrt(16).
    assert 0.35 < cut["value"] < 0.65
    assert cut["null_pairs"] == 300 * 100
    # A stricter false-accept share gives a higher cut.
    assert coherence_cut(sample, 0.005)["value"] > cut["value"]
    assert coherence_cut(sample[:1], 0.02) == {"value": None, "null_pairs": 0}


def test_the_filter_drops_the_outlier_and_keeps_coherent_groups() -> None:
    pairs = [scored("I smoke.", t) for t in ("Palę.", "Ja palę.", "Palę papierosy.")]
    pairs += [scored("I smoke.", "Pociąg się spóźnił.")]
    pairs += [scored("Good night.", t) for t in ("Dobranoc.", "Spokojnej nocy.")]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        vectors = pipeline | "Vectors" >> beam.Create(list(VECTORS.items()))
        cut = pipeline | "Cut" >> beam.Create([{"value": 0.8, "null_pairs": 1}])
        checked = pipeline | "Pairs" >> beam.Create(pairs) | CoherenceFilter(vectors, cut, 3)
        assert_that(
            checked.kept | beam.Map(lambda s: s.pair.candidate),
            equal_to(["Palę.", "Ja palę.", "Palę papierosy.", "Dobranoc.", "Spokojnej nocy."]),
            label="Kept",
        )
        assert_that(checked.dropped, equal_to([("incoherent", 1)]), label="Dropped")


def test_coherence_min_group_is_checked() -> None:
    assert MineConfig().coherence_min_group == 3
    assert MineConfig(coherence_min_group="off").coherence_min_group is None  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="coherence-min-group"):
        MineConfig(coherence_min_group=2)


def test_a_mine_run_records_the_coherence_cut_and_balances(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    lines = [(f"Sentence {i % 40}.", f"Zdanie numer {i} {i % 7}.") for i in range(240)]
    tsv = tmp_path / "bitext.tsv"
    tsv.write_text("".join(f"{p}\t{c}\n" for p, c in lines), encoding="utf-8")
    manifest = run([str(tsv), "--output", str(tmp_path / "out"), "--model", str(tiny_model_dir)])
    assert manifest.accounting_errors() == []
    assert [s["name"] for s in manifest.stages].index("coherence") == (
        [s["name"] for s in manifest.stages].index("threshold") + 1
    )
    assert manifest.counts["coherence"]["in"] == manifest.counts["threshold"]["kept"]
    cut = manifest.threshold["coherence"]
    assert -1.0 <= cut["value"] <= 1.0 and cut["null_pairs"] > 0
