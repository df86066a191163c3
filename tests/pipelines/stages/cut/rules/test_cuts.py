"""pipelines/stages/cut/rules/cuts.py: the null of mismatched pairs, its cut, the scores."""

from __future__ import annotations

import random

import numpy as np
import pytest
from paramine.pipelines.core.groups import pivot_key
from paramine.pipelines.stages.cut.rules.cuts import (
    FALLBACK_THRESHOLD,
    MIN_MISMATCHED,
    NULL_PERCENTILES,
    choose_cut,
    fixed_cut,
    mismatched,
    sample_embedder,
    score_sample,
    shift_count,
)
from paramine.schemas.records import AlignedPair, ScoredPair
from paramine.schemas.text_keys import comparison_key


def pair(pivot: str, candidate: str, line: int = 1) -> AlignedPair:
    return AlignedPair(pivot, candidate, "en", "pl", "test", "mem://shard", line)


# --- mismatched ---------------------------------------------------------------


def mismatched_pairs(sample: list[AlignedPair], shift: int) -> list[AlignedPair]:
    """The shifted pairs ``score_sample`` scores, as (pivot, candidate) records."""
    rows, partners = mismatched(sample, shift)
    return [
        AlignedPair(sample[j].pivot, sample[i].candidate, "en", "pl", "calibration", "s", 0)
        for i, j in zip(rows.tolist(), partners.tolist(), strict=True)
    ]


def test_mismatched_pairs_shift_candidates_onto_other_pivots() -> None:
    sample = [pair("A.", "a"), pair("B.", "b"), pair("C.", "c")]
    out = mismatched_pairs(sample, shift=1)
    assert [(p.pivot, p.candidate) for p in out] == [("B.", "a"), ("C.", "b"), ("A.", "c")]
    assert {p.corpus for p in out} == {"calibration"}


def test_mismatched_pairs_skip_another_translation_of_the_same_pivot() -> None:
    # "Thank you." and "thank you." share a pivot key: "dzięki" truly translates it.
    sample = [pair("Thank you.", "dziękuję"), pair("thank you.", "dzięki"), pair("Go.", "idź")]
    out = mismatched_pairs(sample, shift=1)
    assert ("thank you.", "dziękuję") not in [(p.pivot, p.candidate) for p in out]
    assert [(p.pivot, p.candidate) for p in out] == [("Go.", "dzięki"), ("Thank you.", "idź")]


def test_mismatched_pairs_skip_a_candidate_aligned_with_that_pivot() -> None:
    # "Tak." translates both "Yes." and "Yeah."; "Tak!" has the same comparison key.
    sample = [pair("Yes.", "Tak!"), pair("Yeah.", "Tak."), pair("No.", "Nie.")]
    out = [(p.pivot, p.candidate) for p in mismatched_pairs(sample, shift=1)]
    assert ("Yeah.", "Tak!") not in out
    assert out == [("No.", "Tak."), ("Yes.", "Nie.")]


def test_mismatched_pairs_of_tiny_samples() -> None:
    assert mismatched_pairs([], shift=1) == []
    assert mismatched_pairs([pair("A.", "a")], shift=1) == []
    assert mismatched_pairs([pair("A.", "a"), pair("B.", "b")], shift=2) == []


def test_mismatched_is_the_definition_on_samples_that_share_keys() -> None:
    """Against the rule written out pair by pair, on keys that collide often."""
    rng = random.Random(3)
    pivots = ["Yes.", "yes.", "YES.", "No.", "Go.", "go."]
    candidates = ["Tak.", "tak", "Tak!", "Nie.", "Idź.", "idź"]
    for n in (2, 3, 7, 40):
        sample = [pair(rng.choice(pivots), rng.choice(candidates)) for _ in range(n)]
        aligned = {(pivot_key(p.pivot), comparison_key(p.candidate)) for p in sample}
        for shift in range(1, n + 2):
            expected = [
                (i, (i + shift) % n)
                for i in range(n)
                if shift % n
                and (pivot_key(sample[(i + shift) % n].pivot), comparison_key(sample[i].candidate))
                not in aligned
            ]
            rows, partners = mismatched(sample, shift)
            assert list(zip(rows.tolist(), partners.tolist(), strict=True)) == expected


# --- choose_cut ---------------------------------------------------------------


def test_choose_cut_is_the_quantile_of_mismatched_scores() -> None:
    mismatched = [i / 100 for i in range(100)]  # 0.00 .. 0.99
    cut = choose_cut(mismatched, max_false_accept=0.05, aligned=[0.99, 0.97, 0.5])
    # "higher": an observed score, so at most 5 of the 100 reach the cut.
    assert cut.value == pytest.approx(0.95)
    assert sum(s >= cut.value for s in mismatched) == 5
    assert cut.mode == "auto" and cut.calibrated and cut.fallback is None
    assert cut.null["n"] == 100 and cut.summaries["aligned_sample"]["n"] == 3
    assert cut.aligned_sample_kept == pytest.approx(2 / 3, abs=1e-4)
    assert cut.mismatched_kept == 0.05
    assert len(cut.mismatched_percentiles) == NULL_PERCENTILES
    assert cut.mismatched_percentiles[0] == 0.0 and cut.mismatched_percentiles[-1] == 0.99


def test_choose_cut_falls_back_on_too_few_mismatched_pairs() -> None:
    cut = choose_cut([0.5] * (MIN_MISMATCHED - 1), max_false_accept=0.02)
    assert cut.value == FALLBACK_THRESHOLD
    assert cut.fallback is not None and str(MIN_MISMATCHED - 1) in cut.fallback
    assert cut.mismatched_kept is None and cut.mismatched_percentiles == ()
    # The manifest's layout: no key of what the fallback did not make.
    assert list(cut.to_json()) == [
        "mode", "max_false_accept", "mismatched", "value", "fallback", "score"
    ]  # fmt: skip


def test_a_fixed_cut_is_a_cosine_with_nothing_calibrated() -> None:
    cut = fixed_cut(0.7)
    assert (cut.value, cut.mode, cut.score, cut.calibrated) == (0.7, "fixed", "cosine", False)
    assert cut.to_json() == {"mode": "fixed", "value": 0.7, "score": "cosine"}
    assert fixed_cut(None).to_json() == {"mode": "fixed", "value": None, "score": "cosine"}


# --- score_sample ----------------------------------------------------------------


def test_score_sample_scores_exactly_the_shifted_pairs() -> None:
    rng = np.random.default_rng(0)
    sample = [pair(f"P{i}.", f"c{i}") for i in range(6)] + [pair("p0.", "d0")]
    texts = sorted({p.pivot for p in sample} | {p.candidate for p in sample})
    table = {
        t: v / np.linalg.norm(v)
        for t, v in zip(texts, rng.normal(size=(len(texts), 4)), strict=True)
    }

    def embed(batch: list[str]) -> np.ndarray:
        return np.stack([table[t] for t in batch])

    scores = score_sample(sample, embed, max_shifts=3)
    assert scores["aligned"] == pytest.approx(
        [float(table[p.pivot] @ table[p.candidate]) for p in sample], abs=1e-6
    )
    expected = [
        float(table[m.pivot] @ table[m.candidate])
        for shift in range(1, shift_count(len(sample), 3) + 1)
        for m in mismatched_pairs(sample, shift)
    ]
    assert scores["mismatched"] == pytest.approx(expected, abs=1e-6)


# --- sample_embedder ------------------------------------------------------------


def test_the_sample_must_carry_its_embeddings() -> None:
    vector = np.ones(4, dtype="float32") / 2
    with_vectors = ScoredPair(pair("A.", "a"), 1.0, vector, vector)
    assert sample_embedder([with_vectors])(["A.", "a"]).shape == (2, 4)
    with pytest.raises(ValueError, match="keep_vectors=True"):  # the message names the fix
        sample_embedder([ScoredPair(pair("A.", "a"), 1.0)])
