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

Group support (``--group-support``, on by default) works the other way
round: the threshold lets pairs through down to a looser *floor*, and
``CoherenceFilter`` keeps one that scored below the cut only when its
candidate is very close (a cosine only a tenth of ``max_false_accept`` of
unrelated candidates reach) to a group-mate that passed the cut; others are
dropped (reason ``unsupported``). A loose but right translation ("Hladuju."
for "I'm hungry.", beside "Mám hlad.") scores low against its pivot and high
against its mates; a misaligned line scores low against both. Both cuts come
from the calibration sample (``pipelines/stages/cut/calibrate_threshold.py``, ``support_record``).

``--hard-negative-accept`` adds a stricter check of the same kind to groups of
two or more: a candidate with no group-mate as close as the run's *hard
negatives* is dropped (reason ``hard_negative``). A hard negative is a kept
candidate and its nearest kept candidate of another pivot (faiss,
encoders/neighbours.py): similar-looking sentences that translate different
sentences, the plausible misalignment that unrelated pairs do not model.
``HardNegativeCut`` calibrates that cut on the run's own groups; the
measured trade-off, and why it is off by default, are in docs/thresholds.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam
import numpy as np
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.core.groups import GroupKey, group_key
from paramine.pipelines.core.text import comparison_key
from paramine.pipelines.thresholds.coherence import (
    HARD_NEGATIVE_SAMPLE,
    closest_other,
    hard_negative_cut,
    supported,
)
from paramine.schemas.cut_record import CoherenceRecord, CutRecord, HardNegativeRecord
from paramine.schemas.records import ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage
from paramine.schemas.text_keys import stable_hash

COHERENCE_FILTER = Stage(
    "CoherenceFilter",
    ALIGNED_PAIR,
    ("unsupported", "incoherent", "hard_negative"),
    "after the cut: a pair that scored between group support's floor and the cut without a "
    "group-mate that passed the cut and is as close as few unrelated candidates are; in a "
    "group of --coherence-min-group or more candidates, one no closer to "
    "any other than unrelated candidates are (the calibrated coherence cut) is dropped; with "
    "--hard-negative-accept, in a group of two or more, one no closer to any other than the "
    "run's hard negatives are",
)


class _CoherenceFn(beam.DoFn):
    def __init__(self, min_group: int) -> None:
        self.min_group = min_group
        self.drop = Dropper(COHERENCE_FILTER)

    def process(
        self,
        keyed: tuple[GroupKey, Iterable[tuple[ScoredPair, Any]]],
        cut: CoherenceRecord,
        hard: HardNegativeRecord,
        threshold: CutRecord,
    ) -> Iterator:
        _, members = keyed
        members = list(members)
        # One vector per distinct candidate: a duplicated line is no evidence.
        distinct: dict[str, Any] = {}
        passed: set[str] = set()
        for scored, vector in members:
            key = comparison_key(scored.pair.candidate)
            distinct.setdefault(key, vector)
            if threshold.value is None or scored.score >= threshold.value:
                passed.add(key)
        # Group support first: a candidate below the cut (above the floor)
        # needs a group-mate that passed the cut and is this close to it.
        support = threshold.support.value if threshold.support is not None else None
        reasons = {
            key: "unsupported"
            for key in distinct.keys() - passed
            if not supported(distinct[key], [distinct[k] for k in passed], support)
        }
        distinct = {key: vector for key, vector in distinct.items() if key not in reasons}
        coherent, hard_cut = cut.value, hard.value
        checks = coherent is not None and len(distinct) >= self.min_group
        hard_checks = hard_cut is not None and len(distinct) >= 2
        if checks or hard_checks:
            keys = list(distinct)
            closest = closest_other(np.stack([np.asarray(distinct[k]) for k in keys]))
            for key, best in zip(keys, closest, strict=True):
                if checks and best < coherent:
                    reasons[key] = "incoherent"
                elif hard_checks and best < hard_cut:
                    reasons[key] = "hard_negative"
        for scored, _ in members:
            reason = reasons.get(comparison_key(scored.pair.candidate))
            yield self.drop(reason) if reason else scored


def _with_candidate_vector(
    joined: tuple[str, dict[str, Iterable[Any]]],
) -> Iterator[tuple[GroupKey, tuple[ScoredPair, Any]]]:
    _, parts = joined
    vectors = list(parts["vector"])
    for scored in parts["pairs"]:
        if not vectors:
            raise ValueError(f"no vector for the candidate {scored.pair.candidate!r}")
        yield group_key(scored.pair.pivot_lang, scored.pair.pivot), (scored, vectors[0])


class _WithVectors(beam.PTransform):
    """``(group key, (scored pair, candidate vector))`` of every scored pair."""

    def __init__(self, vectors: beam.PCollection) -> None:
        super().__init__()
        self.vectors = vectors

    def expand(self, scored: beam.PCollection) -> beam.PCollection:
        return (
            {
                "pairs": scored | "ByCandidate" >> beam.Map(lambda s: (s.pair.candidate, s)),
                "vector": self.vectors,
            }
            | "JoinVectors" >> beam.CoGroupByKey()
            | "WithVector" >> beam.FlatMap(_with_candidate_vector)
        )


def _member(keyed: tuple[GroupKey, tuple[ScoredPair, Any]]) -> tuple[str, GroupKey, Any]:
    pivot, (scored, vector) = keyed
    return comparison_key(scored.pair.candidate), pivot, vector


def _sample_order(member: tuple[str, GroupKey, Any]) -> tuple[int, str, GroupKey]:
    return stable_hash(member[0]), member[0], member[1]


class HardNegativeCut(beam.PTransform):
    """The hard-negative cut of a run, a singleton (``hard_negative_cut``'s record).

    Applied to the pairs that passed the cut; the ``HARD_NEGATIVE_SAMPLE``
    candidates with the lowest hashes calibrate it, whatever the input order.

    Args:
        vectors: ``(text, vector)`` for at least every candidate.
        max_accept: Share of hard negatives allowed through.
    """

    def __init__(self, vectors: beam.PCollection, max_accept: float) -> None:
        super().__init__()
        self.vectors = vectors
        self.max_accept = max_accept

    def expand(self, scored: beam.PCollection) -> beam.PCollection:
        return (
            scored
            | "WithVectors" >> _WithVectors(self.vectors)
            | "Members" >> beam.Map(_member)
            | "Sample" >> beam.combiners.Top.Smallest(HARD_NEGATIVE_SAMPLE, key=_sample_order)
            | "Calibrate" >> beam.Map(hard_negative_cut, self.max_accept)
        )


#: The records of the checks that do not run.
NO_COHERENCE = CoherenceRecord(value=None)
NO_HARD_NEGATIVE = HardNegativeRecord(value=None)
#: The threshold side input where every pair passed the cut (no group support).
NO_SUPPORT = CutRecord(value=None)


class CoherenceFilter(beam.PTransform):
    """The group checks: unsupported pairs below the cut, incoherent and weak outliers.

    Args:
        vectors: ``(text, vector)`` for at least every candidate.
        cut: A singleton PCollection, ``coherence_cut``'s result, or ``None``
            (no coherence check).
        min_group: Smallest group (distinct candidates) that the coherence cut
            checks; in a group of two, neither candidate can be told to be the
            outlier.
        hard_negative: A singleton PCollection, ``HardNegativeCut``'s result,
            checked in groups of two or more; or ``None``.
        threshold: The run's threshold record (a singleton PCollection) when
            the pairs were cut at group support's floor: a pair below its
            ``value`` stays only with a group-mate that passed it at least
            ``support.value`` close (reason ``unsupported``); ``None`` when
            every pair passed the cut.
    """

    def __init__(
        self,
        vectors: beam.PCollection,
        cut: beam.PCollection | None,
        min_group: int | None,
        hard_negative: beam.PCollection | None = None,
        threshold: beam.PCollection | None = None,
    ) -> None:
        super().__init__()
        self.vectors = vectors
        self.cut = cut
        self.min_group = min_group
        self.hard_negative = hard_negative
        self.threshold = threshold

    def expand(self, scored: beam.PCollection) -> StageResult:
        pipeline = scored.pipeline
        cut = self.cut
        if cut is None:
            cut = pipeline | "NoCut" >> beam.Create([NO_COHERENCE])
        hard = self.hard_negative
        if hard is None:
            hard = pipeline | "NoHardNegativeCut" >> beam.Create([NO_HARD_NEGATIVE])
        support = self.threshold
        if support is None:
            support = pipeline | "NoSupport" >> beam.Create([NO_SUPPORT])
        checked = (
            scored
            | "WithVectors" >> _WithVectors(self.vectors)
            | "ByPivot" >> beam.GroupByKey()
            | "DropOutliers"
            >> beam.ParDo(
                _CoherenceFn(self.min_group or 0),
                beam.pvalue.AsSingleton(cut),
                beam.pvalue.AsSingleton(hard),
                beam.pvalue.AsSingleton(support),
            ).with_outputs(DROPPED, main="pairs")
        )
        return StageResult(checked["pairs"], checked[DROPPED])
