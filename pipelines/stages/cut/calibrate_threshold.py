"""CalibrateThreshold: a cosine cut that means the same thing for every model.

Cosine scales differ by model (multilingual-e5-small puts mismatched
sentences at 0.78 on average, where the paper's 0.7 was set for
paraphrase-xlm-r-multilingual-v1), so a fixed cut is wrong for some models.
The data gives its own null distribution: pair a sample of candidates with
the pivots of other pairs (a shifted alignment), score them with the same
model, and cut at the quantile that lets through ``max_false_accept`` of
these mismatched pairs.

The sample is encoded once and scored against many shifts (every shift is a
different random pairing, since the sample is in hash order): 1000 sampled
pairs give up to 100,000 mismatched scores for the price of encoding 2000
texts, so the cut at a 1-2% tail rests on a thousand or more scores instead
of a dozen.

The score need not be the cosine: with ``--score margin`` the pairs carry
ratio margins (``pipelines/stages/cut/rules/margin.py``), and the sample's aligned and shifted
pairs are scored by the same margin against the same background, so the cut
is a quantile of the null on the scale it is applied to.

With ``support`` the calibration also sets the cuts of group support
(``support_record``): a looser *floor* on the same null, and the cosine that
only a tenth of ``max_false_accept`` of unrelated candidates reach.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import apache_beam as beam
from apache_beam.transforms.combiners import SingleInputTupleCombineFn
from apache_beam.transforms.stats import ApproximateQuantilesCombineFn
from paramine.pipelines.core.origins import Origins, pair_reader
from paramine.pipelines.stages.cut.rules.calibration_report import borderline, score_histograms
from paramine.pipelines.stages.cut.rules.cuts import (
    MAX_SHIFTS,
    CalibrationOptions,
    Scoring,
    choose_cut,
    cosine_scores,
    sample_embedder,
    sample_rank,
    score_sample,
    shift_count,
    small_sample_warning,
    text_sample_rank,
)
from paramine.pipelines.thresholds.coherence import support_record
from paramine.schemas.cut_record import CutRecord
from paramine.schemas.records import AlignedPair, ScoredPair


class CalibrationSample(beam.PTransform):
    """The calibration sample: the pairs with the smallest stable hashes, in hash order.

    Taken from all prefiltered pairs (it needs the true alignment of the
    whole input, not only of the pivots that can make pairs). A combiner:
    each worker keeps its best ``sample_size`` only.

    Args:
        options: How many pairs (``sample_size``); ``None``: the defaults.
        origins: The pairs come as the prefilter's entries
            (``Prefiltered.entries``) written with these; ``None``: as
            records. Records are made only of the pairs sampled.

    Returns:
        A singleton PCollection: the sample as a list of AlignedPair, in hash
        order; an empty list when there are no pairs.
    """

    def __init__(
        self, options: CalibrationOptions | None = None, origins: Origins | None = None
    ) -> None:
        super().__init__()
        self.sample_size = (options or CalibrationOptions()).sample_size
        self.origins = origins

    def expand(self, pairs: beam.PCollection) -> beam.PCollection:
        texts_of, record = pair_reader(self.origins)

        def negated_rank(pair: Any) -> int:
            pivot, candidate, _ = texts_of(pair)
            return -text_sample_rank(pivot, candidate)

        def in_hash_order(sample: list[Any]) -> list[AlignedPair]:
            return sorted(map(record, sample), key=sample_rank)

        return (
            pairs
            # Largest of the negated hash = the smallest hashes: deterministic.
            | "Sample" >> beam.combiners.Top.Of(self.sample_size, key=negated_rank)
            | "HashOrder" >> beam.Map(in_hash_order)
        )


def sample_texts(sample: list[AlignedPair]) -> Iterator[str]:
    """Every text of the calibration sample, for the run's one encoding pass."""
    for pair in sample:
        yield pair.pivot
        yield pair.candidate


class EmbedSample(beam.PTransform):
    """The calibration sample with its vectors, as one list in hash order.

    The sample's texts are encoded with the run's other texts (each distinct
    text once) and its pairs scored with theirs (``ScorePairs`` in
    ``MineGroups``, keeping the vectors); this gathers them. The
    result is both the calibration's data and the margin's background.

    Applied to the sample's ScoredPairs, carrying their vectors.

    Returns:
        A singleton PCollection: the sample as ScoredPairs (cosines) carrying
        their vectors, in hash order.
    """

    def expand(self, scored: beam.PCollection) -> beam.PCollection:
        def in_hash_order(sample: list[ScoredPair]) -> list[ScoredPair]:
            return sorted(sample, key=lambda s: sample_rank(s.pair))

        return scored | "Gather" >> beam.combiners.ToList() | "HashOrder" >> beam.Map(in_hash_order)


class CalibrateThreshold(beam.PTransform):
    """Computes the cut from the embedded calibration sample (``EmbedSample``).

    Args:
        options: The share of mismatched pairs allowed through
            (``max_false_accept``); ``None``: the defaults.
        max_shifts: Shifted alignments scored against the sample.
        scoring: The score the cut applies to: cosine (default) or the
            margin (``paramine.pipelines.stages.cut.rules.margin.MarginScoring``).
        support: Share of mismatched pairs above group support's floor
            (``support_record``), or ``None``: no group support.

    Returns:
        A singleton PCollection of the run's ``CutRecord``: ``value`` (the
        cut), ``mode``, ``score``, summaries of the sample's aligned and
        mismatched scores, ``sample`` and ``shifts``, ``support``
        (``support_record``) with ``support``, and ``fallback`` when there
        was too little data.
    """

    def __init__(
        self,
        options: CalibrationOptions | None = None,
        max_shifts: int = MAX_SHIFTS,
        scoring: Scoring | None = None,
        support: float | None = None,
    ) -> None:
        super().__init__()
        if max_shifts < 1:  # no flag: a test's or a benchmark's choice
            raise ValueError(f"max_shifts must be positive, got {max_shifts}")
        self.max_false_accept = (options or CalibrationOptions()).max_false_accept
        self.max_shifts = max_shifts
        self.scoring = scoring or Scoring()
        self.support = support

    def expand(self, sample: beam.PCollection) -> beam.PCollection:
        max_false_accept, max_shifts = self.max_false_accept, self.max_shifts
        scoring, support = self.scoring, self.support

        def cut(sample: list[ScoredPair]) -> CutRecord:
            sample = sorted(sample, key=lambda s: sample_rank(s.pair))
            scorer = scoring.scorer(sample) if sample else cosine_scores
            scores = score_sample(
                [s.pair for s in sample], sample_embedder(sample), max_shifts, scorer
            )
            chosen = choose_cut(
                scores["mismatched"], max_false_accept, scores["aligned"], scoring.fallback
            )
            assert chosen.value is not None  # choose_cut always cuts, at worst at the fallback
            n = len(scores["aligned"])
            return replace(
                scoring.describe(chosen),
                support=(
                    support_record(scores["mismatched"], sample, support, max_false_accept)
                    if support is not None and chosen.fallback is None
                    else None
                ),
                warning=small_sample_warning(n) or None,
                histograms=score_histograms(
                    aligned_sample=scores["aligned"], mismatched=scores["mismatched"]
                ),
                borderline=borderline([s.pair for s in sample], scores["aligned"], chosen.value),
                sample=n,
                shifts=shift_count(n, max_shifts),
            )

        return sample | "ChooseCut" >> beam.Map(cut)


class SummarizeScores(beam.PTransform):
    """Count, mean and percentiles of the true alignment's scores, for the manifest.

    Approximate quantiles: bounded memory however many pairs a run scores.
    """

    def expand(self, scored: beam.PCollection) -> beam.PCollection:
        # One combine for the three figures: each global combine is a shuffle
        # and a dozen transforms of the graph, a fixed cost of every run.
        figures = SingleInputTupleCombineFn(
            ApproximateQuantilesCombineFn.create(num_quantiles=101),
            beam.combiners.MeanCombineFn(),
            beam.combiners.CountCombineFn(),
        )
        return (
            scored
            | "Scores" >> beam.Map(lambda s: s.score)
            | "Figures" >> beam.CombineGlobally(figures)
            | "Summarize" >> beam.MapTuple(_score_summary)
        )


def _score_summary(percentiles: list[float], mean: float, n: int) -> dict[str, Any]:
    """The manifest's summary of scores from their percentiles, mean and count."""
    if not n:
        return {"n": 0}
    picks = {"q02": 2, "q05": 5, "q25": 25, "q50": 50, "q75": 75, "q95": 95, "q98": 98}
    return {
        "n": n,
        "mean": round(float(mean), 4),
        **{name: round(float(percentiles[i]), 4) for name, i in picks.items()},
    }
