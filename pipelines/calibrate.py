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
ratio margins (``pipelines/margin.py``), and the sample's aligned and shifted
pairs are scored by the same margin against the same background, so the cut
is a quantile of the null on the scale it is applied to.

With ``support`` the calibration also sets the cuts of group support
(``support_record``): a looser *floor* on the same null, and the cosine that
only a tenth of ``max_false_accept`` of unrelated candidates reach.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import apache_beam as beam
import numpy as np
from paramine.pipelines.coherence import coherence_cut
from paramine.pipelines.encode_texts import ScoreByText
from paramine.pipelines.group_by_pivot import pivot_key
from paramine.pipelines.report.calibration import borderline, score_histograms
from paramine.pipelines.text import comparison_key
from paramine.schemas.digest import stable_hash
from paramine.schemas.records import AlignedPair, ScoredPair

#: Below this many mismatched pairs a quantile at 2% means nothing.
MIN_MISMATCHED = 50
#: The cut used when a run has too little data to calibrate.
FALLBACK_THRESHOLD = 0.8
#: Shifts scored per calibration: enough mismatched scores for a stable tail
#: (sample 1000 x 100 shifts = 100,000), few enough to stay in memory.
MAX_SHIFTS = 100
#: Group support's cosine cut lets through this share of --max-false-accept
#: of unrelated candidate pairs: a pair below the cut needs both a score
#: above the floor and a group-mate this close.
SUPPORT_SHARE = 0.1
#: The default calibration sample, in pairs.
DEFAULT_SAMPLE = 1000
#: Below this many sampled pairs the cut is still chosen, but the run warns:
#: the null's tail then rests on the pivots of a handful of sentences (a
#: 9-pair input put the cut where it dropped 6 of its 9 good pairs).
MIN_TRUSTED_SAMPLE = 200


def small_sample_warning(n: int) -> str | None:
    """The warning for a calibration sample of ``n`` pairs, or None when it is large enough."""
    if n >= MIN_TRUSTED_SAMPLE:
        return None
    return (
        f"--threshold auto calibrated on only {n} pairs (fewer than {MIN_TRUSTED_SAMPLE}), so "
        "the cut is unreliable and may drop many good pairs: mine more data at once, or give "
        "a fixed cut, e.g. --threshold 0.85 for e5-small (docs/thresholds.md lists cuts per model)"
    )


#: A function that embeds texts as unit vectors, (texts, dim).
Embed = Callable[[list[str]], np.ndarray]
#: A function that scores pairs from their unit vectors and their
#: (pivot key, candidate comparison key): (pivots (n, dim), candidates
#: (n, dim), keys) -> (n,).
PairScorer = Callable[[np.ndarray, np.ndarray, Sequence[tuple[str, str]]], np.ndarray]


def cosine_scores(
    pivots: np.ndarray, candidates: np.ndarray, keys: Sequence[tuple[str, str]]
) -> np.ndarray:
    """The cosine of each pair of unit vectors, ``(n,)``; the keys are not needed."""
    return (pivots * candidates).sum(axis=1)  # (n,)


class Scoring:
    """The score a run cuts on: the cosine here; ``paramine.pipelines.margin.MarginScoring`` too.

    CalibrateThreshold scores its sample's aligned and shifted pairs with
    ``scorer(sample)``, so the null distribution is on the same scale as the
    scores the cut is applied to.
    """

    name = "cosine"
    #: The cut when a run has too little data to calibrate.
    fallback = FALLBACK_THRESHOLD

    def record(self) -> dict[str, Any]:
        """What the manifest's ``threshold`` records about the score."""
        return {"score": self.name}

    def scorer(self, sample: Sequence[ScoredPair]) -> PairScorer:
        """The pair scorer for a calibration sample (the cosine needs none of it)."""
        return cosine_scores


def sample_rank(pair: AlignedPair) -> int:
    """The stable hash that orders pairs for the calibration sample."""
    return stable_hash("calibrate", pair.pivot, pair.candidate)


def _aligned_keys(sample: Sequence[AlignedPair]) -> set[tuple[str, str]]:
    return {(pivot_key(p.pivot), comparison_key(p.candidate)) for p in sample}


def mismatched_pairs(sample: Sequence[AlignedPair], shift: int = 1) -> list[AlignedPair]:
    """Pair candidate i with pivot i + shift, skipping pairs that may truly match.

    The sample is in hash order, so neighbours are unrelated sentences. A
    shifted pair is skipped when the sample aligns its candidate (by
    comparison key) with its pivot (by pivot key) anywhere: that covers a
    neighbour with the same pivot (another translation of it) and one with
    the same candidate (a translation of two pivots), which would be true
    pairs and push the cut up.
    """
    n = len(sample)
    if n < 2 or shift % n == 0:
        return []
    aligned = _aligned_keys(sample)
    out = []
    for i, pair in enumerate(sample):
        other = sample[(i + shift) % n]
        if (pivot_key(other.pivot), comparison_key(pair.candidate)) in aligned:
            continue
        out.append(replace(pair, pivot=other.pivot, corpus="calibration", line=0))
    return out


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
    of ``mismatched_pairs(sample, s)``, for ``s`` in 1..``shift_count(n)``.

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
    pkeys = [pivot_key(p.pivot) for p in sample]
    ckeys = [comparison_key(p.candidate) for p in sample]
    aligned = scorer(pivots, candidates, list(zip(pkeys, ckeys, strict=True)))  # (n,)

    known = _aligned_keys(sample)
    mismatched: list[np.ndarray] = []
    for shift in range(1, shift_count(n, max_shifts) + 1):
        other = np.roll(np.arange(n), -shift)  # other[i] = (i + shift) % n
        keep = np.array([(pkeys[j], ckeys[i]) not in known for i, j in enumerate(other)])
        rows, partners = np.arange(n)[keep], other[keep]  # (kept,)
        keys = [(pkeys[j], ckeys[i]) for i, j in zip(rows, partners, strict=True)]
        mismatched.append(scorer(pivots[partners], candidates[rows], keys))  # (kept,)
    flat = np.concatenate(mismatched) if mismatched else np.zeros(0)
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


def choose_cut(
    mismatched: Sequence[float],
    max_false_accept: float,
    aligned: Sequence[float] | None = None,
    fallback: float = FALLBACK_THRESHOLD,
) -> dict[str, Any]:
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
        ``value`` (the cut), ``mode``, ``max_false_accept``, the summaries
        ``mismatched`` and ``aligned_sample``, and ``fallback`` (why) when
        the sample was too small to calibrate.
    """
    info: dict[str, Any] = {
        "mode": "auto",
        "max_false_accept": max_false_accept,
        "mismatched": summarize(mismatched),
    }
    if aligned is not None:
        info["aligned_sample"] = summarize(aligned)
    if len(mismatched) < MIN_MISMATCHED:
        info["value"] = fallback
        info["fallback"] = (
            f"only {len(mismatched)} mismatched pairs (< {MIN_MISMATCHED}) to calibrate on; "
            f"used {fallback}"
        )
        return info
    # "higher": the cut is an observed score, so at most the allowed share passes.
    cut = float(np.quantile(np.asarray(mismatched), 1.0 - max_false_accept, method="higher"))
    info["value"] = round(cut, 6)
    if aligned:
        info["aligned_sample_kept"] = round(float(np.mean(np.asarray(aligned) >= cut)), 4)
    # The false-accept share the cut gives on the null itself (the target is
    # max_false_accept; ties at the cut can make it a little different).
    info["mismatched_kept"] = round(float(np.mean(np.asarray(mismatched) >= cut)), 4)
    return info


def sample_embedder(sample: Sequence[ScoredPair]) -> Embed:
    """An ``Embed`` that looks texts up in the vectors the sample was scored with."""
    vectors: dict[str, np.ndarray] = {}
    for scored in sample:
        if scored.pivot_vector is None or scored.candidate_vector is None:
            raise ValueError(
                "the calibration sample carries no embeddings: score the pairs with "
                "ScoreByText(vectors, keep_vectors=True)"
            )
        vectors.setdefault(scored.pair.pivot, scored.pivot_vector)
        vectors.setdefault(scored.pair.candidate, scored.candidate_vector)

    def embed(texts: list[str]) -> np.ndarray:
        return np.stack([vectors[t] for t in texts]).astype("float32")  # (texts, dim)

    return embed


class CalibrationSample(beam.PTransform):
    """The calibration sample: the pairs with the smallest stable hashes, in hash order.

    Taken from all prefiltered pairs (it needs the true alignment of the
    whole input, not only of the pivots that can make pairs). A combiner:
    each worker keeps its best ``sample_size`` only.

    Returns:
        A singleton PCollection: the sample as a list of AlignedPair, in hash
        order; an empty list when there are no pairs.
    """

    def __init__(self, sample_size: int = DEFAULT_SAMPLE) -> None:
        super().__init__()
        if sample_size < 1:
            raise ValueError(f"calibration sample must be positive, got {sample_size}")
        self.sample_size = sample_size

    def expand(self, pairs: beam.PCollection) -> beam.PCollection:
        def in_hash_order(sample: list[AlignedPair]) -> list[AlignedPair]:
            return sorted(sample, key=sample_rank)

        return (
            pairs
            # Largest of the negated hash = the smallest hashes: deterministic.
            | "Sample" >> beam.combiners.Top.Of(self.sample_size, key=lambda p: -sample_rank(p))
            | "HashOrder" >> beam.Map(in_hash_order)
        )


def sample_texts(sample: list[AlignedPair]) -> Iterator[str]:
    """Every text of the calibration sample, for the run's one encoding pass."""
    for pair in sample:
        yield pair.pivot
        yield pair.candidate


class EmbedSample(beam.PTransform):
    """The calibration sample with its vectors, taken from the run's encoded texts.

    The sample's texts are encoded with the run's other texts (each distinct
    text once), and joined back here; the result is both the calibration's
    data and the margin's background.

    Args:
        vectors: ``(text, vector)`` for at least every text of the sample.

    Returns:
        A singleton PCollection: the sample as ScoredPairs (cosines) carrying
        their vectors, in hash order.
    """

    def __init__(self, vectors: beam.PCollection) -> None:
        super().__init__()
        self.vectors = vectors

    def expand(self, sample: beam.PCollection) -> beam.PCollection:
        def in_hash_order(scored: list[ScoredPair]) -> list[ScoredPair]:
            return sorted(scored, key=lambda s: sample_rank(s.pair))

        return (
            sample
            | "Pairs" >> beam.FlatMap(lambda pairs: pairs)
            | "Embed" >> ScoreByText(self.vectors, keep_vectors=True)
            | "Gather" >> beam.combiners.ToList()
            | "HashOrder" >> beam.Map(in_hash_order)
        )


def support_record(
    mismatched: Sequence[float],
    sample: Sequence[ScoredPair],
    floor_false_accept: float,
    max_false_accept: float,
) -> dict[str, Any]:
    """The cuts of group support: the score floor and the group-mate cosine.

    A pair that scores between ``floor`` and the cut stays when its candidate
    is at least ``value`` in cosine to a candidate of its group that passed
    the cut (``CoherenceFilter``). ``floor`` lets ``floor_false_accept`` of
    the mismatched pairs through; ``value`` is the cosine that only
    ``SUPPORT_SHARE * max_false_accept`` of unrelated candidates reach (the
    shifted candidates of the sample, as for the coherence cut). Both come
    from the run's own null, so they mean the same for every model.

    Returns:
        ``floor``, ``floor_false_accept``, ``value`` (``None`` when the sample
        has too few candidates: no pair below the cut then stays),
        ``false_accept`` and ``null_pairs``.
    """
    floor = float(np.quantile(np.asarray(mismatched), 1.0 - floor_false_accept, method="higher"))
    share = SUPPORT_SHARE * max_false_accept
    cosine = coherence_cut(sample, share)
    return {
        "floor": round(floor, 6),
        "floor_false_accept": floor_false_accept,
        "value": cosine["value"],
        "false_accept": share,
        "null_pairs": cosine["null_pairs"],
    }


def support_floor(info: dict[str, Any]) -> float:
    """The score a pair needs to go on after the threshold: the floor, or else the cut."""
    support = info.get("support")
    if support and support.get("value") is not None:
        return float(support["floor"])
    return float(info["value"])


class CalibrateThreshold(beam.PTransform):
    """Computes the cut from the embedded calibration sample (``EmbedSample``).

    Args:
        max_false_accept: Share of mismatched pairs allowed through.
        max_shifts: Shifted alignments scored against the sample.
        scoring: The score the cut applies to: cosine (default) or the
            margin (``paramine.pipelines.margin.MarginScoring``).
        support: Share of mismatched pairs above group support's floor
            (``support_record``), or ``None``: no group support.

    Returns:
        A singleton PCollection of the threshold dict: ``value`` (the cut),
        ``mode``, ``score``, summaries of the sample's aligned and mismatched
        scores, ``sample`` and ``shifts``, ``support`` (``support_record``)
        with ``support``, and ``fallback`` when there was too little data.
    """

    def __init__(
        self,
        max_false_accept: float = 0.02,
        max_shifts: int = MAX_SHIFTS,
        scoring: Scoring | None = None,
        support: float | None = None,
    ) -> None:
        super().__init__()
        if not 0 < max_false_accept < 1:
            raise ValueError(f"max_false_accept must be in (0, 1), got {max_false_accept}")
        if max_shifts < 1:
            raise ValueError(f"max_shifts must be positive, got {max_shifts}")
        self.max_false_accept = max_false_accept
        self.max_shifts = max_shifts
        self.scoring = scoring or Scoring()
        self.support = support

    def expand(self, sample: beam.PCollection) -> beam.PCollection:
        max_false_accept, max_shifts = self.max_false_accept, self.max_shifts
        scoring, support = self.scoring, self.support

        def cut(sample: list[ScoredPair]) -> dict[str, Any]:
            sample = sorted(sample, key=lambda s: sample_rank(s.pair))
            scorer = scoring.scorer(sample) if sample else cosine_scores
            scores = score_sample(
                [s.pair for s in sample], sample_embedder(sample), max_shifts, scorer
            )
            info = choose_cut(
                scores["mismatched"], max_false_accept, scores["aligned"], scoring.fallback
            )
            if support is not None and "fallback" not in info:
                info["support"] = support_record(
                    scores["mismatched"], sample, support, max_false_accept
                )
            n = len(scores["aligned"])
            warning = small_sample_warning(n)
            if warning:
                info["warning"] = warning
            report = {
                "histograms": score_histograms(
                    aligned_sample=scores["aligned"], mismatched=scores["mismatched"]
                ),
                "borderline": borderline(
                    [s.pair for s in sample], scores["aligned"], float(info["value"])
                ),
            }
            return {
                **info,
                **scoring.record(),
                **report,
                "sample": n,
                "shifts": shift_count(n, max_shifts),
            }

        return sample | "ChooseCut" >> beam.Map(cut)


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
