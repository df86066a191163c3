"""Tests of ratio-margin scoring: the formula, its exclusions, determinism, the pipeline."""

from __future__ import annotations

import random
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.run.mine import demo_input, run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.cut.calibrate_threshold import CalibrateThreshold
from paramine.pipelines.stages.cut.margin_score import MarginScore
from paramine.pipelines.stages.cut.rules.cuts import (
    CalibrationOptions,
    sample_embedder,
    sample_rank,
    score_sample,
)
from paramine.pipelines.stages.cut.rules.margin import (
    FALLBACK_MARGIN,
    MarginOptions,
    MarginScoring,
    _Neighbours,
    build_background,
    margin_of,
    margin_scores,
    pair_keys,
)
from paramine.schemas.errors import UsageError
from paramine.schemas.records import AlignedPair, ScoredPair


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype="float32")
    return vector / np.linalg.norm(vector)


def scored(pivot: str, candidate: str, p: np.ndarray, c: np.ndarray, line: int = 1) -> ScoredPair:
    pair = AlignedPair(pivot, candidate, "en", "pl", "test", "mem://shard", line)
    return ScoredPair(pair, float(p @ c), p, c)


def random_sample(n: int, dim: int = 16, seed: int = 0) -> list[ScoredPair]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        p = unit(*rng.standard_normal(dim))
        c = unit(*(p + 0.8 * rng.standard_normal(dim)))
        out.append(scored(f"Pivot {i}.", f"kandydat {i}", p, c, line=i + 1))
    return out


@pytest.mark.parametrize("size", [60, 4, 1])
def test_the_calibrations_remembered_neighbours_give_the_same_bits(size: int) -> None:
    # Shifted alignments score the sample's vectors again and again, with
    # exclusions that change from shift to shift; remembered, every margin
    # must be the one computed afresh, to the bit. A background of a few
    # pairs leaves fewer than k neighbours (k shrinks), or none on a side.
    sample = random_sample(size, seed=3)
    # Shared keys, so that exclusions reach a vector's nearest neighbours.
    sample += [
        scored(s.pair.pivot, f"inny {i}", s.pivot_vector, s.pivot_vector, line=100 + i)
        for i, s in enumerate(sample[:10])
    ]
    background = build_background(sample)
    pivots = np.stack([s.pivot_vector for s in sample])
    candidates = np.stack([s.candidate_vector for s in sample])
    keys = [pair_keys(s) for s in sample]
    neighbours = _Neighbours()
    n = len(sample)
    for shift in range(12):
        other = [(i + shift) % n for i in range(n)]
        shifted = [(keys[j][0], keys[i][1]) for i, j in enumerate(other)]
        for k in (1, 8):
            fresh = margin_scores(background, pivots[other], candidates, shifted, k)
            remembered = margin_scores(
                background, pivots[other], candidates, shifted, k, neighbours
            )
            assert fresh.tobytes() == remembered.tobytes()


# --- the formula ----------------------------------------------------------------


def test_margin_on_known_vectors() -> None:
    # Background: two unrelated pairs on the axes e2 and e3.
    e2, e3 = unit(0, 1, 0), unit(0, 0, 1)
    background = build_background(
        [scored("B.", "b", e2, e2, line=1), scored("C.", "c", e3, e3, line=2)]
    )
    p, c = unit(1, 1, 0), unit(1, 0, 1)
    # cos(p, c) = 1/2; p's background candidates: cos(p, e2) = 0.7071, cos(p, e3) = 0;
    # c's background pivots: cos(c, e2) = 0, cos(c, e3) = 0.7071.
    k1 = margin_scores(background, p[None], c[None], [("a.", "a")], k=1)
    assert k1[0] == pytest.approx(0.5 / ((0.70710678 + 0.70710678) / 2), rel=1e-6)
    k2 = margin_scores(background, p[None], c[None], [("a.", "a")], k=2)
    assert k2[0] == pytest.approx(0.5 / ((0.35355339 + 0.35355339) / 2), rel=1e-6)
    # k beyond the background: every neighbour left, no error.
    assert margin_scores(background, p[None], c[None], [("a.", "a")], k=50)[0] == k2[0]


def test_same_pivot_translations_and_the_own_partner_are_not_neighbours() -> None:
    p = unit(1, 0.1, 0)
    translation = unit(1, 0.2, 0)  # another true translation of p: very close to it
    far = [unit(0, 1, 0.3), unit(0, 0.3, 1), unit(0.2, 1, 1)]
    sample = [
        # "thank you." and "Thank you." share a pivot key.
        scored("Thank you.", "dziękuję", p, unit(1, 0.15, 0), line=1),
        scored("thank you.", "dzięki", p, translation, line=2),
        *(scored(f"Other {i}.", f"inne {i}", v, v, line=3 + i) for i, v in enumerate(far)),
    ]
    background = build_background(sample)
    c = unit(1, 0, 0.1)
    with_exclusion = margin_scores(background, p[None], c[None], [("thank you.", "dzięki ci")], 2)
    # Without the exclusions the translations (cos ~1) would be p's nearest neighbours.
    manual = build_background(sample[2:])
    unrelated = margin_scores(manual, p[None], c[None], [("thank you.", "dzięki ci")], 2)
    assert with_exclusion[0] == pytest.approx(unrelated[0], rel=1e-6)
    # A candidate aligned in the sample to the pivot is left out of c's pivots too:
    # a sampled pair scores as if it were not in the sample.
    sampled = margin_of(background, sample[1], 2)
    outside = margin_of(manual, sample[1], 2)
    assert sampled == pytest.approx(outside, rel=1e-6)


def test_margin_is_deterministic_whatever_the_order_and_batching() -> None:
    sample = random_sample(60)
    shuffled = list(sample)
    random.Random(3).shuffle(shuffled)
    a, b = build_background(sample), build_background(shuffled)
    assert np.array_equal(a.pivots, b.pivots) and np.array_equal(a.candidates, b.candidates)
    pairs = random_sample(200, seed=1)
    keys = [(s.pair.pivot.casefold(), s.pair.candidate) for s in pairs]
    pv = np.stack([s.pivot_vector for s in pairs])  # (200, dim)
    cv = np.stack([s.candidate_vector for s in pairs])  # (200, dim)
    whole = margin_scores(a, pv, cv, keys, 8)
    order = np.random.default_rng(5).permutation(200)
    permuted = margin_scores(b, pv[order], cv[order], [keys[i] for i in order], 8)
    one_by_one = np.concatenate(
        [margin_scores(a, pv[i : i + 1], cv[i : i + 1], keys[i : i + 1], 8) for i in range(200)]
    )
    # Bit for bit: a pair's margin depends on its vectors and the background only.
    assert np.array_equal(whole[order], permuted)
    assert np.array_equal(whole, one_by_one)


def test_bad_settings_and_missing_vectors() -> None:
    with pytest.raises(UsageError, match=r"^--margin-k 0 is not a positive integer$"):
        MarginScore(MarginOptions(k=0), sample=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="carries no embeddings"):
        build_background([ScoredPair(AlignedPair("A.", "a", "en", "pl", "t", "s", 1), 0.5)])
    with pytest.raises(ValueError, match="needs --threshold auto"):
        MiningSettings(score="margin", threshold="0.8")
    with pytest.raises(ValueError, match="allowed: cosine, margin"):
        MiningSettings(score="csls")
    assert MiningSettings(threshold="auto").cut_options.resolved_score() == "margin"
    assert MiningSettings(threshold="0.7").cut_options.resolved_score() == "cosine"


# --- the transforms ---------------------------------------------------------------


@pytest.mark.pipeline
def test_margin_score_transform_scores_against_the_calibration_sample() -> None:
    pairs = random_sample(40, seed=2)
    expected_background = build_background(pairs)
    expected = {
        (s.pair.pivot, s.pair.candidate): margin_of(expected_background, s, 4) for s in pairs
    }
    shuffled = list(pairs)
    random.Random(9).shuffle(shuffled)
    with TestPipeline(runner="FnApiRunner") as p:
        # The background is the whole input here, given as the sample.
        sample = p | "Sample" >> beam.Create([shuffled])
        out = p | "Pairs" >> beam.Create(shuffled) | MarginScore(MarginOptions(k=4), sample)
        rows = out | beam.Map(lambda s: (s.pair.pivot, s.pair.candidate, s.score))
        kept_vectors = out | beam.Map(lambda s: s.pivot_vector is not None)
        assert_that(rows, equal_to([(*key, v) for key, v in expected.items()]), label="Margins")
        # Rescored pairs leave without their embeddings.
        assert_that(kept_vectors, equal_to([False] * 40), label="Vectors")


@pytest.mark.pipeline
def test_calibration_scores_the_sample_with_the_same_margin() -> None:
    pairs = random_sample(30, seed=4)
    sample = sorted(pairs, key=lambda s: sample_rank(s.pair))
    scoring = MarginScoring(MarginOptions(k=4))
    scores = score_sample(
        [s.pair for s in sample], sample_embedder(sample), 10, scoring.scorer(sample)
    )
    background = build_background(pairs)
    # A sampled pair's aligned margin is the margin MarginScore gives it.
    assert scores["aligned"] == pytest.approx([margin_of(background, s, 4) for s in sample])
    assert len(scores["mismatched"]) == 30 * 10
    with TestPipeline(runner="FnApiRunner") as p:
        info = (
            p
            | beam.Create([pairs])
            | CalibrateThreshold(CalibrationOptions(0.05), max_shifts=10, scoring=scoring)
        )
        assert_that(
            info | beam.Map(lambda i: (i.score, i.margin_k, i.sample, i.fallback is None)),
            equal_to([("margin", 4, 30, True)]),
        )


# --- end to end -------------------------------------------------------------------


@pytest.mark.pipeline
def test_mine_with_margin_scoring_balances_its_accounts(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    output = tmp_path / "out"
    manifest = run(
        [
            demo_input(),
            "--score",
            "margin",
            "--margin-k",
            "4",
            "--model",
            str(tiny_model_dir),
            "--output",
            str(output),
        ]
    )
    threshold = manifest.threshold
    assert threshold["mode"] == "auto" and threshold["score"] == "margin"
    assert threshold["margin_k"] == 4
    assert "fallback" not in threshold
    assert threshold["value"] != FALLBACK_MARGIN
    assert manifest.accounting_errors() == []
    kept = manifest.counts["ThresholdFilter"]["kept"]
    # The cut is a margin: it keeps part of the prefiltered pairs, not all or none.
    assert 0 < kept < manifest.counts["Prefilter"]["kept"]
    assert manifest.rows.pairs == manifest.counts["PostFilter"]["kept"] > 0


def test_shifted_scoring_reuses_sorted_neighbours_to_the_same_bits() -> None:
    # Pivots shared by several pairs, two translations of one pivot (exclusions),
    # and coarse vectors so that similarities tie.
    sample = random_sample(120, dim=8, seed=3)
    sample += [scored("Pivot 1.", "inny kandydat", sample[1].pivot_vector, unit(*[1.0] * 8), 999)]
    background = build_background(sample)
    scorer = MarginScoring(MarginOptions(4)).scorer(sample)
    pivots = np.stack([s.pivot_vector for s in sample])
    candidates = np.round(np.stack([s.candidate_vector for s in sample]), 1)
    keys = [("pivot 1.", "innykandydat")] + [(f"pivot {i}.", f"kandydat{i}") for i in range(120)]
    for shift in (0, 1, 7, 0):  # the same vectors again: from the remembered order
        rolled = np.roll(np.arange(len(sample)), shift)
        expected = margin_scores(background, pivots[rolled], candidates, keys, 4)
        got = scorer(pivots[rolled], candidates, keys)
        assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist()
