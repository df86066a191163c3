"""The maths of the cuts, shared by the stages that apply them.

Calibration (``CalibrateThreshold``, ``ThresholdFilter``): score the
calibration sample's true alignment against shifted alignments (a null from
the run's own data) and choose the cut that lets ``max_false_accept`` of the
mismatched pairs through.

Group support and coherence are in ``coherence.py``, the margin's maths in
``margin.py``, beside this module. Nothing here
builds a pipeline: plain functions over vectors and pairs, tested as such.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from paramine.pipelines.core.groups import pivot_key
from paramine.pipelines.core.text import comparison_key
from paramine.schemas.cut_record import CutRecord
from paramine.schemas.options import option, parse_fields, parse_positive, parse_share
from paramine.schemas.records import AlignedPair, ScoredPair
from paramine.schemas.text_keys import stable_hash

#: Below this many mismatched pairs a quantile at 2% means nothing.
MIN_MISMATCHED = 50
#: The cut used when a run has too little data to calibrate.
FALLBACK_THRESHOLD = 0.8
#: Shifts scored per calibration: enough mismatched scores for a stable tail
#: (sample 1000 x 100 shifts = 100,000), few enough to stay in memory.
MAX_SHIFTS = 100
#: Below this many sampled pairs the cut is still chosen, but the run warns:
#: the null's tail then rests on the pivots of a handful of sentences (a
#: 9-pair input put the cut where it dropped 6 of its 9 good pairs).
MIN_TRUSTED_SAMPLE = 200


@dataclass(frozen=True)
class CalibrationOptions:
    """The calibrated cut's settings: CalibrationSample's and CalibrateThreshold's.

    Attributes:
        max_false_accept: Share of mismatched pairs the cut lets through
            (``--max-false-accept``).
        sample_size: Pairs sampled, by a stable hash, to calibrate the cut
            on (``--calibration-sample``).
    """

    max_false_accept: float = option(
        0.02,
        "with --threshold auto: share of mismatched pairs allowed through (default: %(default)s)",
        group=None,
        parse=parse_share,
    )
    sample_size: int = option(
        1000,
        "with --threshold auto: pairs sampled (by a stable hash) to calibrate the cut on "
        "(default: %(default)s)",
        group=None,
        parse=parse_positive,
        flag="--calibration-sample",
    )

    def __post_init__(self) -> None:
        parse_fields(self)


def small_sample_warning(n: int) -> str | None:
    """The warning for a calibration sample of ``n`` pairs, or None when it is large enough."""
    if n >= MIN_TRUSTED_SAMPLE:
        return None
    return (
        f"--threshold auto calibrated on only {n} pairs (fewer than {MIN_TRUSTED_SAMPLE}), so "
        "the cut is unreliable and may drop many good pairs: mine more data at once, or give "
        "a fixed cut, e.g. --threshold 0.85 for e5-small (docs/thresholds.md lists cuts per model)"
    )


def cosine_scores(
    pivots: np.ndarray, candidates: np.ndarray, keys: Sequence[tuple[str, str]]
) -> np.ndarray:
    """The cosine of each pair of unit vectors, ``(n,)``; the keys are not needed."""
    return (pivots * candidates).sum(axis=1)  # (n,)


class Scoring:
    """The score a run cuts on: the cosine here; ``margin.MarginScoring`` too.

    CalibrateThreshold scores its sample's aligned and shifted pairs with
    ``scorer(sample)``, so the null distribution is on the same scale as the
    scores the cut is applied to.
    """

    name = "cosine"
    #: The cut when a run has too little data to calibrate.
    fallback = FALLBACK_THRESHOLD

    def describe(self, cut: CutRecord) -> CutRecord:
        """``cut`` saying which score it applies to."""
        return replace(cut, score=self.name)

    def scorer(self, sample: Sequence[ScoredPair]) -> PairScorer:
        """The pair scorer for a calibration sample (the cosine needs none of it)."""
        return cosine_scores


def sample_rank(pair: AlignedPair) -> int:
    """The stable hash that orders pairs for the calibration sample."""
    return text_sample_rank(pair.pivot, pair.candidate)


def text_sample_rank(pivot: str, candidate: str) -> int:
    """``sample_rank`` of a pair given by its texts."""
    return stable_hash("calibrate", pivot, candidate)


class _SampleKeys:
    """A sample's pivot and candidate keys as integers, and which (pivot, candidate) it aligns.

    Made once per sample, so each of up to 100 shifts is two array lookups
    (``mismatched`` once made the keys again for every shift: 0.9 of the
    calibration's 3.0 s on the demo).
    """

    def __init__(self, sample: Sequence[AlignedPair]) -> None:
        self.pivot_keys = [pivot_key(p.pivot) for p in sample]
        self.candidate_keys = [comparison_key(p.candidate) for p in sample]
        pivot_ids: dict[str, int] = {}
        candidate_ids: dict[str, int] = {}
        self.pivots = np.array(
            [pivot_ids.setdefault(k, len(pivot_ids)) for k in self.pivot_keys], dtype=np.int64
        )  # (n,)
        self.candidates = np.array(
            [candidate_ids.setdefault(k, len(candidate_ids)) for k in self.candidate_keys],
            dtype=np.int64,
        )  # (n,)
        self.width = max(len(candidate_ids), 1)
        self.aligned = np.unique(self.pivots * self.width + self.candidates)  # (distinct,)

    def shifted(self, shift: int) -> tuple[np.ndarray, np.ndarray]:
        """``mismatched``'s rows and partners for ``shift``."""
        n = len(self.pivots)
        if n < 2 or shift % n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        other = np.roll(np.arange(n), -shift)  # other[i] = (i + shift) % n
        pairs = self.pivots[other] * self.width + self.candidates  # (n,)
        keep = ~np.isin(pairs, self.aligned)
        return np.arange(n)[keep], other[keep]


def mismatched(sample: Sequence[AlignedPair], shift: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidate i against pivot i + shift, skipping pairs that may truly match.

    The sample is in hash order, so neighbours are unrelated sentences. A
    shifted pair is skipped when the sample aligns its candidate (by
    comparison key) with its pivot (by pivot key) anywhere: that covers a
    neighbour with the same pivot (another translation of it) and one with
    the same candidate (a translation of two pivots), which would be true
    pairs and push the cut up.

    Returns:
        ``(rows, partners)``: the candidates' rows and their pivots' rows.
    """
    return _SampleKeys(sample).shifted(shift)


def shift_count(n: int, max_shifts: int = MAX_SHIFTS) -> int:
    """How many shifts (1, 2, ...) a sample of ``n`` pairs is scored against."""
    return max(0, min(n - 1, max_shifts))


def score_sample(
    sample: Sequence[AlignedPair],
    embed: Embed,
    max_shifts: int = MAX_SHIFTS,
    scorer: PairScorer = cosine_scores,
) -> dict[str, list[float]]:
    """Score a sample's true alignment and its shifted alignments.

    Each distinct text is embedded once; shift ``s`` scores exactly the pairs
    ``mismatched(sample, s)`` gives, for ``s`` in 1..``shift_count(n)``.

    Args:
        sample: Pairs in hash order.
        embed: Maps texts to unit vectors, ``(texts, dim)``.
        max_shifts: Most shifts scored.
        scorer: The score; the cosine by default.

    Returns:
        ``aligned``: the cosine of every sampled pair; ``mismatched``: the
        cosines of the shifted pairs, shift by shift.
    """
    n = len(sample)
    if n == 0:
        return {"aligned": [], "mismatched": []}
    index: dict[str, int] = {}
    for pair in sample:
        index.setdefault(pair.pivot, len(index))
        index.setdefault(pair.candidate, len(index))
    vectors = np.asarray(embed(list(index)), dtype="float32")  # (texts, dim)
    pivots = vectors[[index[p.pivot] for p in sample]]  # (n, dim)
    candidates = vectors[[index[p.candidate] for p in sample]]  # (n, dim)
    sample_keys = _SampleKeys(sample)
    pkeys, ckeys = sample_keys.pivot_keys, sample_keys.candidate_keys
    aligned = scorer(pivots, candidates, list(zip(pkeys, ckeys, strict=True)))  # (n,)

    shifted: list[np.ndarray] = []
    for shift in range(1, shift_count(n, max_shifts) + 1):
        rows, partners = sample_keys.shifted(shift)  # (kept,)
        keys = [(pkeys[j], ckeys[i]) for i, j in zip(rows.tolist(), partners.tolist(), strict=True)]
        shifted.append(scorer(pivots[partners], candidates[rows], keys))  # (kept,)
    flat = np.concatenate(shifted) if shifted else np.zeros(0)
    return {
        "aligned": [float(s) for s in aligned],
        "mismatched": [float(s) for s in flat],
    }


def summarize(scores: Sequence[float]) -> dict[str, Any]:
    """Count, mean and quantiles of a score distribution, for the manifest."""
    if len(scores) == 0:
        return {"n": 0}
    values = np.asarray(scores, dtype="float64")
    quantiles = np.quantile(values, [0.02, 0.05, 0.25, 0.5, 0.75, 0.95, 0.98])
    names = ("q02", "q05", "q25", "q50", "q75", "q95", "q98")
    return {
        "n": int(values.size),
        "mean": round(float(values.mean()), 4),
        "std": round(float(values.std()), 4),
        **{name: round(float(q), 4) for name, q in zip(names, quantiles, strict=False)},
    }


#: Percentiles of the null recorded with a calibrated cut: 0, 1, ..., 100.
NULL_PERCENTILES = 101


def fixed_cut(value: float | None) -> CutRecord:
    """The threshold record of a fixed ``--threshold``: a cosine, nothing calibrated."""
    return CutRecord(value=value, mode="fixed", score="cosine")


def choose_cut(
    mismatched: Sequence[float],
    max_false_accept: float,
    aligned: Sequence[float] | None = None,
    fallback: float = FALLBACK_THRESHOLD,
) -> CutRecord:
    """Return the calibrated cut and how it was chosen.

    The cut is the (1 - ``max_false_accept``) quantile of the mismatched
    scores. With the sample's aligned scores, it also records the share of
    them that the cut keeps (an estimate of the run's recall before grouping).

    Args:
        mismatched: Scores of the shifted (mismatched) pairs.
        max_false_accept: Share of mismatched pairs allowed through.
        aligned: Scores of the sampled pairs as aligned, for the record.
        fallback: The cut when there are too few mismatched scores (on the
            score's own scale).

    Returns:
        The cut (``value``) with ``mode`` auto, ``max_false_accept``, the
        summaries ``mismatched`` and ``aligned_sample``, and ``fallback``
        (why) when the sample was too small to calibrate.
    """
    summaries = {"mismatched": summarize(mismatched)}
    if aligned is not None:
        summaries["aligned_sample"] = summarize(aligned)
    calibrated = CutRecord(
        value=fallback, mode="auto", max_false_accept=max_false_accept, summaries=summaries
    )
    if len(mismatched) < MIN_MISMATCHED:
        why = (
            f"only {len(mismatched)} mismatched pairs (< {MIN_MISMATCHED}) to calibrate on; "
            f"used {fallback}"
        )
        return replace(calibrated, fallback=why)
    null = np.asarray(mismatched)
    # "higher": the cut is an observed score, so at most the allowed share passes.
    cut = float(np.quantile(null, 1.0 - max_false_accept, method="higher"))
    return replace(
        calibrated,
        value=round(cut, 6),
        aligned_sample_kept=(
            round(float(np.mean(np.asarray(aligned) >= cut)), 4) if aligned else None
        ),
        # The false-accept share the cut gives on the null itself (the target is
        # max_false_accept; ties at the cut can make it a little different).
        mismatched_kept=round(float(np.mean(null >= cut)), 4),
        # The whole null in 101 numbers: the score any share of mismatched pairs
        # reaches, for a looser cut than the run's (paramine adapt keeps a line for
        # training unless it scores as most mismatched pairs do).
        mismatched_percentiles=tuple(
            round(float(q), 6) for q in np.quantile(null, np.linspace(0.0, 1.0, NULL_PERCENTILES))
        ),
    )


def sample_embedder(sample: Sequence[ScoredPair]) -> Embed:
    """An ``Embed`` that looks texts up in the vectors the sample was scored with."""
    vectors: dict[str, np.ndarray] = {}
    for scored in sample:
        if scored.pivot_vector is None or scored.candidate_vector is None:
            raise ValueError(
                "the calibration sample carries no embeddings: score the pairs with "
                "ScorePairs(vectors, keep_vectors=True)"
            )
        vectors.setdefault(scored.pair.pivot, scored.pivot_vector)
        vectors.setdefault(scored.pair.candidate, scored.candidate_vector)

    def embed(texts: list[str]) -> np.ndarray:
        return np.stack([vectors[t] for t in texts]).astype("float32")  # (texts, dim)

    return embed


#: A function that embeds texts as unit vectors, (texts, dim).
Embed = Callable[[list[str]], np.ndarray]


#: A function that scores pairs from their unit vectors and their
#: (pivot key, candidate comparison key): (pivots (n, dim), candidates
#: (n, dim), keys) -> (n,).
PairScorer = Callable[[np.ndarray, np.ndarray, Sequence[tuple[str, str]]], np.ndarray]
