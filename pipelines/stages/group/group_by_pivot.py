"""GroupByPivot: before scoring, keep the pivots that can make a pair.

Only the aligned pairs of pivots with two or more distinct candidates
(capped per pivot) go on: nothing else can ever become a paraphrase pair,
so nothing else is encoded.

pairs | "KeyByPivot" | "LowestRanks" | "MultiCandidate"          -> the groups that go on
pairs | "OfKeptCandidates" (those groups, a side input) | "ByPivot" | "EmitCandidates"

Most pivots have one candidate (at a million subtitle pairs, 95% of them),
so the decision is made on compact values, without the records: per pivot,
how many pairs it has and the ranks (``candidate_rank``) of its lowest
``max_group_size`` distinct candidates. Only the pairs of the groups that go
on are then picked out of the input and grouped in full. In a mining run
the input is the prefilter's entries (``core.origins``), smaller than
records, which the runner holds whole while this stage reads them; the
pairs picked out become records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, DropTally, StageResult
from paramine.pipelines.core.groups import GroupKey, GroupOptions, candidate_rank, group_key
from paramine.pipelines.core.origins import Origins, PairTexts, pair_reader
from paramine.schemas.records import AlignedPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

GROUP_BY_PIVOT = Stage(
    "GroupByPivot",
    ALIGNED_PAIR,
    ("single_candidate", "over_group_cap"),
    "before scoring: keep pivots with two or more distinct candidates (capped); the rest can "
    "never make a pair and is never encoded",
)

#: Per pivot: how many pairs it has, and the ranks of its kept candidates, lowest first.
Ranks = tuple[int, tuple[int, ...]]


class LowestRanksFn(beam.CombineFn):
    """Counts a pivot's pairs and keeps the ``cap`` lowest distinct ranks of its candidates.

    The same choice as ``CandidateGroupFn``'s (the ``cap`` lowest hashes of
    pivot key and candidate), made before scoring. A rank stands for its
    candidate text: two candidates of one pivot that share a 64-bit hash would
    count as one. Bounded state per key however hot the pivot, and the same
    result whatever the order of inputs and merges: a rank left out of a
    partial set had ``cap`` lower ones beside it, so it is not among the
    lowest of all either.

    The runner holds an accumulator per distinct pivot until the decision
    is made (millions at 10M subtitle pairs), and most pivots have one pair:
    its accumulator is that pair's rank alone, an int, and ``(n, ranks)``
    once the pivot has more (a count and a tuple of one rank cost about 110
    bytes more a pivot).
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap  # checked where it is given: GroupOptions.max_group_size

    def create_accumulator(self) -> Ranks | int:
        return 0, ()

    def add_input(self, acc: Ranks | int, rank: int) -> Ranks | int:
        seen, ranks = self.extract_output(acc)
        if not seen:
            return rank
        if rank not in ranks and (len(ranks) < self.cap or rank < ranks[-1]):
            ranks = tuple(sorted((*ranks, rank))[: self.cap])
        return seen + 1, ranks

    def merge_accumulators(self, accs: Iterable[Ranks | int]) -> Ranks | int:
        seen, ranks = 0, set[int]()
        for acc in accs:
            other_seen, other_ranks = self.extract_output(acc)
            seen += other_seen
            ranks.update(other_ranks)
        if seen == 1:
            return ranks.pop()
        return seen, tuple(sorted(ranks)[: self.cap])

    def extract_output(self, acc: Ranks | int) -> Ranks:
        if isinstance(acc, int):
            return 1, (acc,)
        return acc


class _MultiCandidateFn(beam.DoFn):
    """The groups that go on, ``(key, (pairs, ranks))``; a single candidate's pairs are dropped."""

    def __init__(self) -> None:
        self.tally = DropTally(GROUP_BY_PIVOT)

    def process(self, keyed: tuple[GroupKey, Ranks]) -> Iterator[tuple[GroupKey, Ranks]]:
        _, (seen, ranks) = keyed
        if len(ranks) < 2:
            # One distinct candidate can never make a pair, whatever its score.
            self.tally.add("single_candidate", seen)
        else:
            yield keyed

    def finish_bundle(self) -> Iterator:
        yield from self.tally.flush()


def pivot_and_rank(texts: PairTexts) -> tuple[GroupKey, int]:
    """A pair's group key and its candidate's rank in the group (what ``LowestRanksFn`` keeps).

    Public for ``benchmarks/lib/pair_loop.py``, which runs the stage's decision in a plain loop.
    """
    pivot, candidate, pivot_lang = texts
    return group_key(pivot_lang, pivot), candidate_rank(pivot, candidate)


def _of_kept_candidates(
    pair: Any,
    groups: dict[GroupKey, Ranks],
    texts_of: Callable[[Any], PairTexts],
    record: Callable[[Any], AlignedPair],
) -> Iterator[tuple[GroupKey, AlignedPair]]:
    """The pair's record, keyed by its pivot, if its pivot's group goes on with its candidate."""
    pivot, candidate, pivot_lang = texts_of(pair)
    key = group_key(pivot_lang, pivot)
    group = groups.get(key)
    # Most pivots' groups do not go on (98% of the pairs at a million subtitle
    # pairs): their candidates' ranks, a hash each, are never needed.
    if group is not None and candidate_rank(pivot, candidate) in group[1]:
        yield key, record(pair)


class _EmitCandidates(beam.DoFn):
    """A group's pairs: for each kept candidate, the earliest pair of each spelling of the pivot.

    Every spelling ("Thank you." and "thank you.") goes on, so that the group
    after the threshold is the one scoring everything first would have made.
    """

    def __init__(self) -> None:
        self.drop = Dropper(GROUP_BY_PIVOT)

    def process(
        self, keyed: tuple[GroupKey, Iterable[AlignedPair]], groups: dict[GroupKey, Ranks]
    ) -> Iterator:
        key, pairs = keyed
        earliest: dict[tuple[str, str], AlignedPair] = {}
        for pair in pairs:
            variant = (pair.candidate, pair.pivot)
            held = earliest.get(variant)
            if held is None or (pair.shard, pair.line) < (held.shard, held.line):
                earliest[variant] = pair
        seen = groups[key][0]
        if seen > len(earliest):
            yield self.drop("over_group_cap", seen - len(earliest))
        yield from sorted(earliest.values(), key=lambda p: (p.shard, p.line))


class GroupByPivot(beam.PTransform):
    """Before scoring: keeps the aligned pairs of pivots that have two or more distinct candidates.

    Counted under the ``group`` stage. A pivot with a single distinct
    candidate can never produce a paraphrase pair, so its pairs are dropped
    here, unencoded (on Tatoeba eng-pol 9,775 of 9,934 pivots). Hot pivots
    keep ``max_group_size`` distinct candidates, chosen by hash. A pivot is
    its language and its text (``group_key``): pivots in several languages
    never share a group.

    Args:
        options: The cap (``GroupOptions.max_group_size``); ``None``: the defaults.
        origins: The pairs come as the prefilter's entries
            (``Prefiltered.entries``) written with these; ``None``: as
            records. Records are made only of the pairs kept.
    """

    def __init__(self, options: GroupOptions | None = None, origins: Origins | None = None) -> None:
        super().__init__()
        self.combine = LowestRanksFn((options or GroupOptions()).max_group_size)
        self.origins = origins

    def expand(self, pairs: beam.PCollection) -> StageResult:
        texts_of, record = pair_reader(self.origins)
        decided = (
            pairs
            | "KeyByPivot" >> beam.Map(lambda pair: pivot_and_rank(texts_of(pair)))
            | "LowestRanks" >> beam.CombinePerKey(self.combine)
            | "MultiCandidate"
            >> beam.ParDo(_MultiCandidateFn()).with_outputs(DROPPED, main="groups")
        )
        groups = beam.pvalue.AsDict(decided["groups"])
        kept = (
            pairs
            | "OfKeptCandidates"
            >> beam.FlatMap(_of_kept_candidates, groups, texts_of, record).with_output_types(
                tuple[tuple[str, str], AlignedPair]
            )
            | "ByPivot" >> beam.GroupByKey()
            | "EmitCandidates"
            >> beam.ParDo(_EmitCandidates(), groups).with_outputs(DROPPED, main="pairs")
        )
        dropped = (decided[DROPPED], kept[DROPPED]) | "AllDropped" >> beam.Flatten()
        return StageResult(kept["pairs"], dropped)
