"""CalibrateThreshold: a cosine cut that means the same thing for every model.

Cosine scales differ by model (multilingual-e5-small puts mismatched
sentences at 0.78 on average, where the paper's 0.7 was set for
paraphrase-xlm-r-multilingual-v1), so a fixed cut is wrong for some models.
The data gives its own null distribution: pair a sample of candidates with
the pivots of other pairs (a shifted alignment), score them with the same
model, and cut at the quantile that lets through ``max_false_accept`` of
these mismatched pairs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import apache_beam as beam
import numpy as np
from apache_beam.ml.inference.base import RunInference

from encoders.handler import PairEncoderHandler
from pipelines.group_by_pivot import pivot_key, stable_hash
from schemas.records import AlignedPair, ScoredPair

#: Below this many mismatched pairs a quantile at 2% means nothing.
MIN_MISMATCHED = 50
#: The cut used when a run has too little data to calibrate.
FALLBACK_THRESHOLD = 0.8


def mismatched_pairs(sample: Sequence[AlignedPair], shift: int = 1) -> list[AlignedPair]:
    """Pair candidate i with pivot i + shift, skipping pairs that may truly match.

    The sample is in hash order, so neighbours are unrelated sentences; a
    neighbour with the same pivot (another translation of it) or the same
    candidate is skipped, since it would be a true pair.
    """
    out = []
    n = len(sample)
    for i, pair in enumerate(sample):
        other = sample[(i + shift) % n]
        if n < 2 or pivot_key(other.pivot) == pivot_key(pair.pivot):
            continue
        if other.candidate == pair.candidate:
            continue
        out.append(replace(pair, pivot=other.pivot, corpus="calibration", line=0))
    return out


def summarize(scores: Sequence[float]) -> dict[str, Any]:
    """Count, mean and quantiles of a score distribution, for the manifest."""
    if not scores:
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


def choose_cut(mismatched: Sequence[float], max_false_accept: float) -> dict[str, Any]:
    """Return the calibrated cut and how it was chosen."""
    info: dict[str, Any] = {
        "mode": "auto",
        "max_false_accept": max_false_accept,
        "mismatched": summarize(mismatched),
    }
    if len(mismatched) < MIN_MISMATCHED:
        info["value"] = FALLBACK_THRESHOLD
        info["fallback"] = (
            f"only {len(mismatched)} mismatched pairs (< {MIN_MISMATCHED}) to calibrate on; "
            f"used {FALLBACK_THRESHOLD}"
        )
        return info
    # "higher": the cut is an observed score, so at most the allowed share passes.
    cut = float(np.quantile(np.asarray(mismatched), 1.0 - max_false_accept, method="higher"))
    info["value"] = round(cut, 6)
    return info


class CalibrateThreshold(beam.PTransform):
    """Computes the cut from a sample of the run's own pairs.

    Args:
        handler: The same model handler that scores the pairs.
        max_false_accept: Share of mismatched pairs allowed through.
        sample_size: Pairs sampled (by a stable hash, so the sample and the
            cut are the same on every run).

    Returns:
        A singleton PCollection of the threshold dict: ``value`` (the cut),
        ``mode``, and a summary of the mismatched distribution.
    """

    def __init__(
        self, handler: PairEncoderHandler, max_false_accept: float = 0.02, sample_size: int = 1000
    ) -> None:
        super().__init__()
        if not 0 < max_false_accept < 1:
            raise ValueError(f"max_false_accept must be in (0, 1), got {max_false_accept}")
        if sample_size < 2:
            raise ValueError(f"calibration sample must be at least 2, got {sample_size}")
        self.handler = handler
        self.max_false_accept = max_false_accept
        self.sample_size = sample_size

    def expand(self, pairs: beam.PCollection) -> beam.PCollection:
        max_false_accept = self.max_false_accept

        def rank(pair: AlignedPair) -> int:
            return stable_hash("calibrate", pair.pivot, pair.candidate)

        def shifted(sample: list[AlignedPair]) -> Iterator[AlignedPair]:
            yield from mismatched_pairs(sorted(sample, key=rank))

        def cut(_: None, scored: list[ScoredPair]) -> dict[str, Any]:
            return choose_cut(sorted(s.score for s in scored), max_false_accept)

        mismatched = (
            pairs
            # Largest of the negated hash = the smallest hashes: deterministic.
            | "Sample" >> beam.combiners.Top.Of(self.sample_size, key=lambda p: -rank(p))
            | "ShiftAlignment" >> beam.FlatMap(shifted)
            | "ScoreMismatched" >> RunInference(self.handler)
        )
        return (
            pairs.pipeline
            | "Once" >> beam.Create([None])
            | "ChooseCut" >> beam.Map(cut, beam.pvalue.AsList(mismatched))
        )


class SummarizeScores(beam.PTransform):
    """Count, mean and percentiles of the true alignment's scores, for the manifest.

    Approximate quantiles: bounded memory however many pairs a run scores.
    """

    def expand(self, scored: beam.PCollection) -> beam.PCollection:
        scores = scored | "Scores" >> beam.Map(lambda s: s.score)
        percentiles = scores | "Percentiles" >> beam.ApproximateQuantiles.Globally(101)
        mean = scores | "Mean" >> beam.combiners.Mean.Globally()
        count = scores | "Count" >> beam.combiners.Count.Globally()

        def summary(_: None, p: list[float], mean: float, n: int) -> dict[str, Any]:
            if not n:
                return {"n": 0}
            picks = {"q02": 2, "q05": 5, "q25": 25, "q50": 50, "q75": 75, "q95": 95, "q98": 98}
            return {
                "n": n,
                "mean": round(float(mean), 4),
                **{name: round(float(p[i]), 4) for name, i in picks.items()},
            }

        return (
            scored.pipeline
            | "Once" >> beam.Create([None])
            | "Summarize"
            >> beam.Map(
                summary,
                beam.pvalue.AsSingleton(percentiles),
                beam.pvalue.AsSingleton(mean),
                beam.pvalue.AsSingleton(count),
            )
        )
