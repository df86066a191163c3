"""Rival pivots: a candidate stays with the pivot it translates best.

The plausible misalignments of subtitle and web bitext put a line that
translates some *other* sentence of the corpus beside a pivot: a neighbouring
subtitle, the translation of a similar sentence. Such a line scores well
against the wrong pivot (they share words and topic), often above the cut,
but it scores better still against the pivot it really translates, and the
input usually aligns it with that one too. So, after scoring:

- ``RivalPairs`` finds, for every candidate of the groups, the other pivots
  the input aligns it with (pairs that grouping set aside because their pivot
  has one candidate; the encoder only sees these rival pivots, whose
  candidates it encodes anyway);
- ``ContestCandidates`` drops a scored pair whose cosine is lower, by more
  than ``rival_margin``, than the same candidate's cosine against one of its
  other pivots (reason ``rival_pivot``); and, inside that margin, one whose
  candidate leans to another pivot by more than half the margin beyond what
  every other candidate of the group does (``relative_preference``: the
  group shows whether the two pivots are one sentence or two).

A rival is a pivot in the candidate's pivot language: a candidate that
also translates a pivot of another language (the German and the English
sentence that a Polish line translates) has no rival in it, and cosines
across languages are not on one scale.

Both sides of the contest are cosines of the same model, so no calibration
is needed; the margin only spares a candidate that translates two
near-identical pivots ("I smoke." / "I'm smoking.") about equally well.
The measured effect is in docs/thresholds.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import apache_beam as beam
import numpy as np
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.core.groups import ContestOptions, group_key, pivot_key, pivot_language
from paramine.pipelines.core.origins import Origins, PairTexts, pair_reader
from paramine.pipelines.core.text import comparison_key
from paramine.schemas.records import AlignedPair, ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage
from paramine.schemas.text_keys import stable_hash

CONTEST_CANDIDATES = Stage(
    "ContestCandidates",
    ALIGNED_PAIR,
    ("rival_pivot",),
    "after scoring: a candidate that the input also aligns with another pivot, which it "
    "translates better by more than --rival-margin (cosine), or which it leans to by more "
    "than half of it beyond every other candidate of its group, leaves this pivot's group",
)

#: Rival pivots examined per candidate: a very common candidate ("Yes.")
#: is aligned with thousands of pivots; the ones with the lowest hashes
#: stand for them, so the cost per candidate is bounded and deterministic.
MAX_RIVALS = 20

#: Where a candidate meets its rivals: its pivots' language and its comparison key.
CandidateKey = tuple[str, str]


def candidate_key(pair: AlignedPair) -> CandidateKey:
    """The key of a contest: the candidate, among the pivots of one language."""
    return candidate_key_of(pair.candidate, pair.pivot_lang)


def candidate_key_of(candidate: str, pivot_lang: str) -> CandidateKey:
    """``candidate_key`` of a candidate text and its pivot's language."""
    return pivot_language(pivot_lang), comparison_key(candidate)


#: A candidate's rivals so far: per rival pivot key, its hash and its earliest pair.
Rivals = dict[str, tuple[int, AlignedPair]]


class LowestRivalsFn(beam.CombineFn):
    """A candidate's ``MAX_RIVALS`` rival pivots of lowest hash, each by its earliest pair.

    Bounded state per candidate however many pivots the input aligns it
    with, so the runner never holds a common candidate's pairs as a list.
    The same result in any order of inputs and merges: a pivot left out of
    a partial set had ``MAX_RIVALS`` lower ones beside it, so it is not
    among the lowest of all; one that is among them is never left out, so
    its earliest pair is found.
    """

    def create_accumulator(self) -> Rivals:
        return {}

    def add_input(self, rivals: Rivals, pair: AlignedPair) -> Rivals:
        key = pivot_key(pair.pivot)
        held = rivals.get(key)
        if held is not None:
            if (pair.shard, pair.line) < (held[1].shard, held[1].line):
                rivals[key] = held[0], pair
            return rivals
        rivals[key] = stable_hash(key), pair
        if len(rivals) > MAX_RIVALS:
            del rivals[max(rivals, key=lambda k: (rivals[k][0], k))]
        return rivals

    def merge_accumulators(self, accumulators: Iterable[Rivals]) -> Rivals:
        merged: Rivals = {}
        for rivals in accumulators:
            for key, (rank, pair) in rivals.items():
                held = merged.get(key)
                if held is None or (pair.shard, pair.line) < (held[1].shard, held[1].line):
                    merged[key] = rank, pair
        lowest = sorted(merged, key=lambda k: (merged[k][0], k))[:MAX_RIVALS]
        return {key: merged[key] for key in lowest}

    def extract_output(self, rivals: Rivals) -> list[AlignedPair]:
        return [rivals[key][1] for key in sorted(rivals)]


class RivalPairs(beam.PTransform):
    """The aligned pairs that pit a grouped candidate against another pivot.

    Applied to the prefiltered pairs; ``grouped`` is what ``GroupByPivot``
    kept. Output: at most ``MAX_RIVALS`` pairs per grouped candidate whose
    pivot is not one of its grouped pivots. They are evidence for the
    contest, not records of the run: they are scored and never written.

    Args:
        grouped: What ``GroupByPivot`` kept.
        origins: The prefiltered pairs come as the prefilter's entries
            (``Prefiltered.entries``) written with these; ``None``: as
            records. Records are made only of the pairs kept.
    """

    def __init__(self, grouped: beam.PCollection, origins: Origins | None = None) -> None:
        super().__init__()
        self.grouped = grouped
        self.origins = origins

    def expand(self, prefiltered: beam.PCollection) -> beam.PCollection:
        # Each grouped candidate with the pivots it is grouped under: a side
        # input, since the grouped pairs are few (2% of the input at a
        # million subtitle pairs). A combine, not a join, then keeps a
        # bounded set of rivals per candidate: a join would hold all the
        # pairs of a candidate as one list, however common the candidate.
        grouped_pivots = beam.pvalue.AsDict(
            self.grouped
            | "GroupedCandidates" >> beam.Map(lambda p: (candidate_key(p), pivot_key(p.pivot)))
            | "PivotsOfCandidates" >> beam.CombinePerKey(beam.combiners.ToSetCombineFn())
        )
        texts_of, record = pair_reader(self.origins)
        return (
            prefiltered
            | "ByCandidate"
            >> beam.FlatMap(
                _of_grouped_candidates, grouped_pivots, texts_of, record
            ).with_output_types(tuple[tuple[str, str], AlignedPair])
            | "LowestRivals" >> beam.CombinePerKey(LowestRivalsFn())
            | "Rivals" >> beam.FlatMap(lambda keyed: keyed[1]).with_output_types(AlignedPair)
        )


def _of_grouped_candidates(
    pair: Any,
    grouped_pivots: dict[CandidateKey, set[str]],
    texts_of: Callable[[Any], PairTexts],
    record: Callable[[Any], AlignedPair],
) -> Iterator[tuple[CandidateKey, AlignedPair]]:
    """The pair's record keyed by its candidate, if the candidate is grouped under other pivots."""
    pivot, candidate, pivot_lang = texts_of(pair)
    key = candidate_key_of(candidate, pivot_lang)
    pivots = grouped_pivots.get(key)
    if pivots is not None and pivot_key(pivot) not in pivots:
        yield key, record(pair)


class _ContestFn(beam.DoFn):
    """By candidate: the absolute rule, and each kept pair's rivals that it prefers at all."""

    def __init__(self, margin: float) -> None:
        self.margin = margin
        self.drop = Dropper(CONTEST_CANDIDATES)

    def process(self, keyed: tuple[CandidateKey, dict[str, Iterable[Any]]]) -> Iterator:
        _, joined = keyed
        scored: list[ScoredPair] = list(joined["scored"])
        if not scored:
            return
        others = [*scored, *list(joined["rival"])]
        for pair in scored:
            own = comparison_key(pair.pair.pivot)
            # The other pivots (rival or grouped) this candidate matches better;
            # one that differs from its own only in case or punctuation ("Give me
            # a break!" / "Give me a break.") is the same sentence, no rival.
            gaps = [
                (rival_cosine(pair, other) - pair.score, other.pivot_vector)
                for other in others
                if comparison_key(other.pair.pivot) != own
            ]
            if any(gap > self.margin for gap, _ in gaps):
                yield self.drop("rival_pivot")
                continue
            preferred = [(gap, vector) for gap, vector in gaps if gap > 0]
            yield group_key(pair.pair.pivot_lang, pair.pair.pivot), (pair, preferred)


class _RelativeContestFn(beam.DoFn):
    """By pivot: a candidate that prefers a rival more than every group-mate does leaves."""

    def __init__(self, margin: float) -> None:
        self.margin = margin
        self.drop = Dropper(CONTEST_CANDIDATES)

    def process(self, keyed: tuple[Any, Iterable[tuple[ScoredPair, list]]]) -> Iterator:
        _, members = keyed
        members = list(members)
        for pair, preferred in members:
            if any(
                relative_preference(pair, gap, vector, members) > self.margin
                for gap, vector in preferred
            ):
                yield self.drop("rival_pivot")
            else:
                yield pair


def relative_preference(
    pair: ScoredPair,
    gap: float,
    rival_vector: Any,
    members: list[tuple[ScoredPair, list]],
) -> float:
    """How much more ``pair``'s candidate prefers ``rival`` than its group-mates do.

    ``gap`` is cos(candidate, rival) - cos(candidate, pivot), above 0. Each
    group-mate's own gap to the same rival pivot, cos(mate, rival) -
    cos(mate, pivot), says how far apart the two pivots are for this model:
    near 0 for two wordings of one sentence ("I smoke." / "I'm smoking."),
    negative when the rival is another sentence. The result is ``gap`` less
    the largest mate's gap; ``-inf`` without vectors or without mates.
    """
    if rival_vector is None:
        return -math.inf
    key = comparison_key(pair.pair.candidate)
    mates = [
        float(np.dot(mate.candidate_vector, rival_vector)) - mate.score
        for mate, _ in members
        if comparison_key(mate.pair.candidate) != key and mate.candidate_vector is not None
    ]
    return gap - max(mates) if mates else -math.inf


def rival_cosine(pair: ScoredPair, other: ScoredPair) -> float:
    """The cosine of ``pair``'s own candidate text with ``other``'s pivot.

    The pairs of one contest share a candidate's comparison key, not always
    its text: "Zwariowałeś?" (Are you nuts?) and "Zwariowałeś." (You've gone
    mad.) differ in what they say. With both vectors at hand the candidate
    itself is compared; without them, ``other``'s own score stands in.
    """
    if pair.candidate_vector is None or other.pivot_vector is None:
        return other.score
    return float(np.dot(pair.candidate_vector, other.pivot_vector))


def contest_key(scored: ScoredPair) -> tuple[CandidateKey, ScoredPair]:
    return candidate_key(scored.pair), scored


def rival_key(rival: ScoredPair) -> tuple[CandidateKey, ScoredPair]:
    """A rival keyed for its contest, without its candidate's vector.

    The contest reads a rival's pivot vector and score only (the candidate
    is one of the group's own), and the join buffers every rival of the run.
    """
    return candidate_key(rival.pair), ScoredPair(rival.pair, rival.score, rival.pivot_vector)


class ContestCandidates(beam.PTransform):
    """Drops a scored pair when its candidate translates another pivot better.

    Two rules, both in cosines, both dropping with ``rival_pivot``:

    - absolute: the pair's cosine is below the candidate's best cosine (over
      its grouped and rival pivots) by more than ``margin``;
    - relative: the candidate prefers a rival pivot at all, and by more than
      ``margin / 2`` beyond what every other candidate of its group prefers
      that same rival (``relative_preference``). Needs the vectors of the
      scored and rival pairs; skipped for pairs without them.

    Args:
        rival_scores: The rival pairs (``RivalPairs``), scored, with their vectors.
        options: Its ``rival_margin`` is the absolute rule's cosine margin
            (``margin``); half of it is the relative rule's.

    Applied to the scored pairs of the groups, before any margin rescoring:
    both sides of the comparison are plain cosines.
    """

    def __init__(self, rival_scores: beam.PCollection, options: ContestOptions) -> None:
        super().__init__()
        if options.rival_margin is None:
            raise ValueError("ContestCandidates needs a rival margin: with none, do not contest")
        self.rival_scores = rival_scores
        self.margin = options.rival_margin

    def expand(self, scored: beam.PCollection) -> StageResult:
        rivals = self.rival_scores | "RivalByCandidate" >> beam.Map(rival_key)
        absolute = (
            {"scored": scored | "ByCandidate" >> beam.Map(contest_key), "rival": rivals}
            | "JoinRivals" >> beam.CoGroupByKey()
            | "Contest" >> beam.ParDo(_ContestFn(self.margin)).with_outputs(DROPPED, main="pairs")
        )
        relative = (
            absolute["pairs"]
            | "ByPivot" >> beam.GroupByKey()
            | "RelativeContest"
            >> beam.ParDo(_RelativeContestFn(self.margin / 2)).with_outputs(DROPPED, main="pairs")
        )
        dropped = (absolute[DROPPED], relative[DROPPED]) | "AllDropped" >> beam.Flatten()
        return StageResult(relative["pairs"], dropped)
