"""Group coherence: a candidate unrelated to every other candidate of its group is an outlier.

The candidates of one pivot translate the same sentence, so each is close to
the others in the embedding space. A misaligned line that passed the cut
(a long sentence with few close neighbours gets a high margin) looks, to its
group-mates, like any unrelated sentence. ``CoherenceFilter`` runs after the
cut: in a group of ``min_group`` or more distinct candidates, a candidate
whose highest cosine to another candidate of the group is below the
*coherence cut* is dropped (reason ``incoherent``).

The coherence cut is calibrated per run, like the threshold, on the
calibration sample: the candidates of the sample paired with candidates of
other sample pairs (shifted alignments) give the cosines of unrelated
candidates, and the cut lets ``max_false_accept`` of them through.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apache_beam as beam
import numpy as np
from paramine.pipelines.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.group_by_pivot import pivot_key
from paramine.pipelines.text import comparison_key
from paramine.schemas.records import ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

COHERENCE = Stage(
    "coherence",
    ALIGNED_PAIR,
    ("incoherent",),
    "after the cut: in a group of --coherence-min-group or more candidates, one no closer to "
    "any other than unrelated candidates are (the calibrated coherence cut) is dropped",
)

#: Shifted alignments of the sample's candidates that make the null.
SHIFTS = 100


def coherence_cut(sample: Sequence[ScoredPair], max_false_accept: float) -> dict[str, Any]:
    """The cosine that only ``max_false_accept`` of unrelated candidate pairs reach.

    Args:
        sample: The calibration sample with its vectors (``EmbedSample``).
        max_false_accept: Share of unrelated pairs allowed at or above the cut.

    Returns:
        ``{"value": cut or None, "null_pairs": n}``; ``None`` when the sample
        has fewer than two distinct candidates (the check is then skipped).
    """
    vectors: dict[str, np.ndarray] = {}
    for scored in sample:
        key = comparison_key(scored.pair.candidate)
        if scored.candidate_vector is not None and key not in vectors:
            vectors[key] = np.asarray(scored.candidate_vector, dtype="float32")
    if len(vectors) < 2:
        return {"value": None, "null_pairs": 0}
    matrix = np.stack(list(vectors.values()))  # (candidates, dim)
    n = len(matrix)
    null = np.concatenate(
        [
            np.einsum("ij,ij->i", matrix, np.roll(matrix, shift, axis=0))
            for shift in range(1, min(SHIFTS, n - 1) + 1)
        ]
    )  # (candidates * shifts,)
    return {
        "value": round(float(np.quantile(null, 1.0 - max_false_accept)), 6),
        "null_pairs": len(null),
    }


def outliers(vectors: np.ndarray, cut: float) -> np.ndarray:
    """Which rows are below ``cut`` in cosine to every other row (a boolean mask)."""
    similarities = vectors @ vectors.T  # (candidates, candidates)
    np.fill_diagonal(similarities, -np.inf)
    result: np.ndarray = similarities.max(axis=1) < cut
    return result


class _CoherenceFn(beam.DoFn):
    def __init__(self, min_group: int) -> None:
        self.min_group = min_group
        self.drop = Dropper(COHERENCE)

    def process(
        self,
        keyed: tuple[str, Iterable[tuple[ScoredPair, Any]]],
        cut: dict[str, Any],
    ) -> Iterator:
        _, members = keyed
        members = list(members)
        # One vector per distinct candidate: a duplicated line is no evidence.
        distinct: dict[str, Any] = {}
        for scored, vector in members:
            distinct.setdefault(comparison_key(scored.pair.candidate), vector)
        if cut["value"] is None or len(distinct) < self.min_group:
            for scored, _ in members:
                yield scored
            return
        keys = list(distinct)
        mask = outliers(np.stack([np.asarray(distinct[k]) for k in keys]), cut["value"])
        dropped = {k for k, out in zip(keys, mask, strict=True) if out}
        for scored, _ in members:
            if comparison_key(scored.pair.candidate) in dropped:
                yield self.drop("incoherent")
            else:
                yield scored


def _with_candidate_vector(
    joined: tuple[str, dict[str, Iterable[Any]]],
) -> Iterator[tuple[str, tuple[ScoredPair, Any]]]:
    _, parts = joined
    vectors = list(parts["vector"])
    for scored in parts["pairs"]:
        if not vectors:
            raise ValueError(f"no vector for the candidate {scored.pair.candidate!r}")
        yield pivot_key(scored.pair.pivot), (scored, vectors[0])


class CoherenceFilter(beam.PTransform):
    """Drops the outliers of groups of ``min_group`` or more distinct candidates.

    Args:
        vectors: ``(text, vector)`` for at least every candidate.
        cut: A singleton PCollection, ``coherence_cut``'s result.
        min_group: Smallest group (distinct candidates) that is checked; in a
            group of two, neither candidate can be told to be the outlier.
    """

    def __init__(self, vectors: beam.PCollection, cut: beam.PCollection, min_group: int) -> None:
        super().__init__()
        self.vectors = vectors
        self.cut = cut
        self.min_group = min_group

    def expand(self, scored: beam.PCollection) -> StageResult:
        checked = (
            {
                "pairs": scored | "ByCandidate" >> beam.Map(lambda s: (s.pair.candidate, s)),
                "vector": self.vectors,
            }
            | "JoinVectors" >> beam.CoGroupByKey()
            | "WithVector" >> beam.FlatMap(_with_candidate_vector)
            | "ByPivot" >> beam.GroupByKey()
            | "DropOutliers"
            >> beam.ParDo(
                _CoherenceFn(self.min_group), beam.pvalue.AsSingleton(self.cut)
            ).with_outputs(DROPPED, main="pairs")
        )
        return StageResult(checked["pairs"], checked[DROPPED])
