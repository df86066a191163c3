"""Group coherence: an outlier of a group is dropped, a coherent group is kept."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.coherence_filter import CoherenceFilter
from paramine.pipelines.thresholds.coherence import (
    SUPPORT_SHARE,
    closest_other,
    coherence_cut,
    hard_negative_cut,
    support_floor,
    support_record,
)
from paramine.schemas.cut_record import (
    CoherenceRecord,
    CutRecord,
    HardNegativeRecord,
    SupportRecord,
)
from paramine.schemas.errors import UsageError
from paramine.schemas.records import AlignedPair, ScoredPair

from tests.pipelines.formats.helpers import write_tsv


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
    # What the filter compares with its cut: each candidate's closest group-mate.
    assert (closest_other(matrix) < 0.8).tolist() == [False, False, True]
    # With a cut below every cosine nothing is an outlier.
    assert not (closest_other(matrix) < -1.0).any()


def test_the_coherence_cut_comes_from_unrelated_candidates() -> None:
    rng = np.random.default_rng(7)
    sample = [
        scored(f"pivot {i}", f"candidate {i}", unit(*rng.normal(size=16))) for i in range(300)
    ]
    cut = coherence_cut(sample, 0.02)
    # Random 16-d unit vectors: the 98th percentile of their cosines, about 2 / sqrt(16).
    assert 0.35 < cut.value < 0.65
    assert cut.null_pairs == 300 * 100
    # A stricter false-accept share gives a higher cut.
    assert coherence_cut(sample, 0.005).value > cut.value
    assert coherence_cut(sample[:1], 0.02) == CoherenceRecord(value=None, null_pairs=0)


@pytest.mark.pipeline
def test_the_filter_drops_the_outlier_and_keeps_coherent_groups() -> None:
    pairs = [scored("I smoke.", t) for t in ("Palę.", "Ja palę.", "Palę papierosy.")]
    pairs += [scored("I smoke.", "Pociąg się spóźnił.")]
    pairs += [scored("Good night.", t) for t in ("Dobranoc.", "Spokojnej nocy.")]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        vectors = pipeline | "Vectors" >> beam.Create(list(VECTORS.items()))
        cut = pipeline | "Cut" >> beam.Create([CoherenceRecord(value=0.8, null_pairs=1)])
        checked = pipeline | "Pairs" >> beam.Create(pairs) | CoherenceFilter(vectors, cut, 3)
        assert_that(
            checked.kept | beam.Map(lambda s: s.pair.candidate),
            equal_to(["Palę.", "Ja palę.", "Palę papierosy.", "Dobranoc.", "Spokojnej nocy."]),
            label="Kept",
        )
        assert_that(checked.dropped, equal_to([("incoherent", 1)]), label="Dropped")


def test_coherence_min_group_is_checked() -> None:
    assert MiningSettings().coherence_min_group == 3
    assert MiningSettings(coherence_min_group="off").coherence_min_group is None  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="coherence-min-group"):
        MiningSettings(coherence_min_group=2)


@pytest.mark.pipeline
def test_a_mine_run_records_the_coherence_cut_and_balances(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    lines = [(f"Sentence {i % 40}.", f"Zdanie numer {i} {i % 7}.") for i in range(240)]
    tsv = write_tsv(tmp_path / "bitext.tsv", lines)
    manifest = run([str(tsv), "--output", str(tmp_path / "out"), "--model", str(tiny_model_dir)])
    assert manifest.accounting_errors() == []
    assert [s["name"] for s in manifest.stages].index("CoherenceFilter") == (
        [s["name"] for s in manifest.stages].index("ThresholdFilter") + 1
    )
    assert manifest.counts["CoherenceFilter"]["in"] == manifest.counts["ThresholdFilter"]["kept"]
    cut = manifest.threshold["coherence"]
    assert -1.0 <= cut["value"] <= 1.0 and cut["null_pairs"] > 0


# Hard negatives: candidates of other pivots that look alike.


def hard_members(rng: np.random.Generator, pivots: int) -> list[tuple[str, str, np.ndarray]]:
    """Two candidates per pivot, near each other, and pivots far apart."""
    members = []
    for p in range(pivots):
        centre = rng.normal(size=32)
        for c in range(2):
            vector = unit(*(centre + 0.05 * rng.normal(size=32)))
            members.append((f"candidate {p}.{c}", f"pivot {p}", vector))
    return members


def test_the_hard_negative_cut_comes_from_other_pivots_nearest_candidates() -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(11)
    members = hard_members(rng, 60)
    record = hard_negative_cut(members, 0.1)
    # One hard negative per candidate: its nearest candidate of another pivot,
    # never its own pivot's twin (cosine ~0.99).
    assert record.hard_negatives == 120 and record.accept == 0.1
    vectors = np.stack([v for _, _, v in members])
    similarities = vectors @ vectors.T
    other = np.array([[m[1] != n[1] for n in members] for m in members])
    nearest_other = np.where(other, similarities, -np.inf).max(axis=1)
    assert record.value == pytest.approx(
        float(np.quantile(nearest_other, 0.9, method="higher")), abs=1e-5
    )
    assert record.value < 0.9  # far below the twins
    # A candidate aligned with two pivots is no hard negative of either.
    shared = [*members, ("candidate 0.0", "pivot 1", members[0][2])]
    assert hard_negative_cut(shared, 0.1).hard_negatives == 120
    # Too few to calibrate: no cut, recorded so.
    few = hard_negative_cut(members[:20], 0.1)
    assert few.value is None and few.hard_negatives == 20


@pytest.mark.pipeline
def test_the_filter_drops_a_group_whose_candidates_are_no_closer_than_hard_negatives() -> None:
    # "Good night." holds two candidates farther apart (0.64) than the hard cut:
    # a group of two, so the coherence cut never sees it, but the hard one does.
    vectors = {**VECTORS, "Spokojnej nocy.": unit(0.6, 0.8, 0.0, 0.0)}
    pairs = [scored("I smoke.", t) for t in ("Palę.", "Ja palę.", "Palę papierosy.")]
    pairs += [scored("Good night.", t) for t in ("Dobranoc.", "Spokojnej nocy.")]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        vectors_in = pipeline | "Vectors" >> beam.Create(list(vectors.items()))
        cut = pipeline | "Cut" >> beam.Create([CoherenceRecord(value=0.5, null_pairs=1)])
        hard = pipeline | "Hard" >> beam.Create([HardNegativeRecord(value=0.9, hard_negatives=100)])
        checked = (
            pipeline
            | "Pairs" >> beam.Create(pairs)
            | CoherenceFilter(vectors_in, cut, 3, hard_negative=hard)
        )
        assert_that(
            checked.kept | beam.Map(lambda s: s.pair.candidate),
            equal_to(["Palę.", "Ja palę.", "Palę papierosy."]),
            label="Kept",
        )
        assert_that(checked.dropped, equal_to([("hard_negative", 1)] * 2), label="Dropped")


def test_hard_negative_accept_is_checked() -> None:
    assert MiningSettings().hard_negative_accept is None
    assert MiningSettings(hard_negative_accept="0.1").hard_negative_accept == 0.1  # type: ignore[arg-type]
    for bad in ("0", "1", "1.5"):
        with pytest.raises(UsageError, match="hard-negative-accept"):
            MiningSettings(hard_negative_accept=bad)  # type: ignore[arg-type]


@pytest.mark.pipeline
def test_a_mine_run_with_hard_negatives_records_the_cut_and_balances(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    pytest.importorskip("faiss")
    lines = [(f"Sentence {i % 40}.", f"Zdanie numer {i} {i % 7}.") for i in range(240)]
    tsv = write_tsv(tmp_path / "bitext.tsv", lines)
    common = [str(tsv), "--model", str(tiny_model_dir), "--threshold", "-1.0"]
    plain = run([*common, "--output", str(tmp_path / "plain")])
    manifest = run([*common, "--output", str(tmp_path / "hard"), "--hard-negative-accept", "0.5"])
    assert manifest.accounting_errors() == []
    cut = manifest.threshold["hard_negative"]
    assert cut["accept"] == 0.5 and cut["hard_negatives"] >= 50
    assert -1.0 <= cut["value"] <= 1.0
    # Letting half the hard negatives through drops some candidates, all for this reason.
    dropped = manifest.counts["CoherenceFilter"]["dropped"]
    assert set(dropped) == {"hard_negative"} and dropped["hard_negative"] > 0
    assert manifest.counts["CoherenceFilter"]["in"] == plain.counts["CoherenceFilter"]["in"]
    assert manifest.counts["CoherenceFilter"]["kept"] == (
        plain.counts["CoherenceFilter"]["kept"] - dropped["hard_negative"]
    )
    assert "hard_negative" not in plain.threshold


# Group support: a pair below the cut stays beside a close group-mate that passed it.


def scored_at(pivot: str, candidate: str, score: float) -> ScoredPair:
    pair = AlignedPair(pivot, candidate, "en", "pl", "fixture", "mem://bitext", 1)
    return ScoredPair(pair, score)


@pytest.mark.pipeline
def test_a_pair_below_the_cut_stays_only_beside_a_close_mate_that_passed_it() -> None:
    # Cut 0.9, floor 0.8 (the threshold let everything here through), support 0.95.
    threshold = CutRecord(value=0.9, support=SupportRecord(value=0.95, floor=0.8))
    assert float(VECTORS["Palę."] @ VECTORS["Ja palę."]) > 0.95
    assert float(VECTORS["Palę."] @ VECTORS["Pociąg się spóźnił."]) < 0.95
    pairs = [
        scored_at("I smoke.", "Palę.", 0.93),  # passed the cut
        scored_at("I smoke.", "Ja palę.", 0.85),  # below it, beside "Palę.": stays
        scored_at("I smoke.", "Pociąg się spóźnił.", 0.85),  # below it, alone: leaves
        # Neither passed the cut: no support, however close they are.
        scored_at("Good night.", "Dobranoc.", 0.85),
        scored_at("Good night.", "Dobranoc!", 0.85),
    ]
    vectors = {**VECTORS, "Dobranoc!": VECTORS["Dobranoc."]}
    with TestPipeline(runner="FnApiRunner") as pipeline:
        vectors_in = pipeline | "Vectors" >> beam.Create(list(vectors.items()))
        cut = pipeline | "Cut" >> beam.Create([CoherenceRecord(value=None, null_pairs=0)])
        info = pipeline | "Threshold" >> beam.Create([threshold])
        checked = (
            pipeline
            | "Pairs" >> beam.Create(pairs)
            | CoherenceFilter(vectors_in, cut, 3, threshold=info)
        )
        assert_that(
            checked.kept | beam.Map(lambda s: s.pair.candidate),
            equal_to(["Palę.", "Ja palę."]),
            label="Kept",
        )
        assert_that(checked.dropped, equal_to([("unsupported", 1)] * 3), label="Dropped")


def test_the_support_cuts_come_from_the_run_s_null() -> None:
    rng = np.random.default_rng(11)
    sample = [
        scored(f"pivot {i}", f"candidate {i}", unit(*rng.normal(size=16))) for i in range(300)
    ]
    mismatched = list(np.linspace(0.0, 1.0, 1001))
    record = support_record(mismatched, sample, 0.1, 0.02)
    # The floor lets 10% of the mismatched scores through; the cut at 2% is higher.
    assert record.floor == pytest.approx(0.9, abs=1e-3)
    assert record.floor_false_accept == 0.1
    # The cosine is the unrelated candidates' cut at a tenth of --max-false-accept.
    assert record.false_accept == pytest.approx(SUPPORT_SHARE * 0.02)
    assert record.value == coherence_cut(sample, SUPPORT_SHARE * 0.02).value
    assert record.value > coherence_cut(sample, 0.02).value
    # The floor applies only where the cosine could be calibrated.
    assert support_floor(CutRecord(value=0.97, support=record)) == record.floor
    assert support_floor(CutRecord(value=0.97, support=replace(record, value=None))) == 0.97
    assert support_floor(CutRecord(value=0.97)) == 0.97


def test_group_support_is_checked() -> None:
    assert MiningSettings().group_support == 0.1
    assert MiningSettings(group_support="off").group_support is None  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="group-support"):
        MiningSettings(group_support=0.01)  # below --max-false-accept 0.02
    with pytest.raises(UsageError, match="group-support"):
        MiningSettings(group_support="1.5")  # type: ignore[arg-type]


#: Words the tiny model's tokenizer knows whole (tests/tiny_model.py).
WORDS = (
    "the quick brown fox jumps over lazy dog ala ma kota kot ale to jest zdanie po polsku "
    "this is a sentence in english dobry wieczór jak się masz how are you today my friend "
    "yes no maybe"
)


def support_bitext(path: Path) -> Path:
    """Pivots with three candidates each (the more words changed, the lower the
    score) and one unrelated line, in words the tiny model knows: its scores
    then spread around the calibrated cut."""
    rng = random.Random(3)
    words = WORDS.split()
    lines = []
    for _ in range(120):
        chosen = rng.sample(words, 6)
        pivot = " ".join(chosen) + "."
        for changed in range(3):
            candidate = list(chosen)
            for _ in range(changed):
                candidate[rng.randrange(6)] = rng.choice(words)
            lines.append((pivot, " ".join(candidate) + " x."))
        lines.append((pivot, " ".join(rng.sample(words, 6)) + " y."))
    return write_tsv(path, lines)


@pytest.mark.pipeline
def test_a_mine_run_with_group_support_records_its_cuts_and_balances(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    common = [str(support_bitext(tmp_path / "bitext.tsv")), "--model", str(tiny_model_dir)]
    plain = run([*common, "--output", str(tmp_path / "plain"), "--group-support", "off"])
    manifest = run([*common, "--output", str(tmp_path / "support")])
    assert manifest.accounting_errors() == [] and plain.accounting_errors() == []
    support = manifest.threshold["support"]
    assert "support" not in plain.threshold
    # The same calibration: the same cut; the floor is below it.
    assert manifest.threshold["value"] == plain.threshold["value"]
    assert support["floor"] < manifest.threshold["value"]
    assert -1.0 <= support["value"] <= 1.0 and support["null_pairs"] > 0
    # The threshold lets more through, down to the floor; group support decides
    # on those (the tiny model's vectors mean nothing: here it sends them away).
    below_cut = manifest.counts["ThresholdFilter"]["kept"] - plain.counts["ThresholdFilter"]["kept"]
    unsupported = manifest.counts["CoherenceFilter"]["dropped"]["unsupported"]
    assert 0 < unsupported <= below_cut
    assert manifest.counts["CoherenceFilter"]["kept"] >= plain.counts["CoherenceFilter"]["kept"]
