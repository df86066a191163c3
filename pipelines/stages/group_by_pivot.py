"""GroupByPivot: before scoring, keep the pivots that can make a pair.

Only the aligned pairs of pivots with two or more distinct candidates
(capped per pivot) go on: nothing else can ever become a paraphrase pair,
so nothing else is encoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.core.groups import GroupKey, group_key, pivot_key
from paramine.schemas.digest import stable_hash
from paramine.schemas.records import AlignedPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

GROUP = Stage(
    "group",
    ALIGNED_PAIR,
    ("single_candidate", "over_group_cap"),
    "before scoring: keep pivots with two or more distinct candidates (capped); the rest can "
    "never make a pair and is never encoded",
)


@dataclass
class _CandidateSet:
    # candidate text -> (rank hash, pivot text -> its earliest aligned pair)
    kept: dict[str, tuple[int, dict[str, AlignedPair]]] = field(default_factory=dict)
    seen: int = 0


def _earliest(a: AlignedPair, b: AlignedPair) -> AlignedPair:
    return a if (a.shard, a.line) <= (b.shard, b.line) else b


class CandidateSetFn(beam.CombineFn):
    """Keeps, per pivot key, the aligned pairs of at most ``cap`` distinct candidates.

    The same choice as ``CandidateGroupFn``'s (the ``cap`` lowest hashes of
    pivot key and candidate) made before scoring, with every spelling of the
    pivot that a kept candidate came with ("Thank you." and "thank you."), so
    that the group after the threshold is the one scoring everything first
    would have made. Bounded state per key however hot the pivot.
    """

    def __init__(self, cap: int) -> None:
        if cap < 2:
            raise ValueError(f"max_group_size must be at least 2, got {cap}")
        self.cap = cap

    def create_accumulator(self) -> _CandidateSet:
        return _CandidateSet()

    def _offer(
        self, acc: _CandidateSet, candidate: str, rank: int, variants: dict[str, AlignedPair]
    ) -> None:
        held = acc.kept.get(candidate)
        if held is not None:
            merged = dict(held[1])
            for pivot, pair in variants.items():
                merged[pivot] = _earliest(pair, merged[pivot]) if pivot in merged else pair
            acc.kept[candidate] = (rank, merged)
            return
        if len(acc.kept) < self.cap:
            acc.kept[candidate] = (rank, dict(variants))
            return
        worst = max(acc.kept, key=lambda c: acc.kept[c][0])
        if rank < acc.kept[worst][0]:
            del acc.kept[worst]
            acc.kept[candidate] = (rank, dict(variants))

    def add_input(self, acc: _CandidateSet, pair: AlignedPair) -> _CandidateSet:
        acc.seen += 1
        rank = stable_hash(pivot_key(pair.pivot), pair.candidate)
        self._offer(acc, pair.candidate, rank, {pair.pivot: pair})
        return acc

    def merge_accumulators(self, accs: Iterable[_CandidateSet]) -> _CandidateSet:
        merged = _CandidateSet()
        for acc in accs:
            merged.seen += acc.seen
            for candidate, (rank, variants) in acc.kept.items():
                self._offer(merged, candidate, rank, variants)
        return merged

    def extract_output(self, acc: _CandidateSet) -> _CandidateSet:
        return acc


class _EmitCandidates(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper(GROUP)

    def process(self, keyed: tuple[GroupKey, _CandidateSet]) -> Iterator:
        _, acc = keyed
        if len(acc.kept) < 2:
            # One distinct candidate can never make a pair, whatever its score.
            yield self.drop("single_candidate", acc.seen)
            return
        pairs = [pair for _, variants in acc.kept.values() for pair in variants.values()]
        if acc.seen > len(pairs):
            yield self.drop("over_group_cap", acc.seen - len(pairs))
        yield from sorted(pairs, key=lambda p: (p.shard, p.line))


class GroupByPivot(beam.PTransform):
    """Before scoring: keeps the aligned pairs of pivots that have two or more distinct candidates.

    Counted under the ``group`` stage. A pivot with a single distinct
    candidate can never produce a paraphrase pair, so its pairs are dropped
    here, unencoded (on Tatoeba eng-pol 9,775 of 9,934 pivots). Hot pivots
    keep ``max_group_size`` distinct candidates, chosen by hash. A pivot is
    its language and its text (``group_key``): pivots in several languages
    never share a group.
    """

    def __init__(self, max_group_size: int = 50) -> None:
        super().__init__()
        self.combine = CandidateSetFn(max_group_size)

    def expand(self, pairs: beam.PCollection) -> StageResult:
        kept = (
            pairs
            | "KeyByPivot" >> beam.Map(lambda p: (group_key(p.pivot_lang, p.pivot), p))
            | "CapDistinctCandidates" >> beam.CombinePerKey(self.combine)
            | "EmitCandidates" >> beam.ParDo(_EmitCandidates()).with_outputs(DROPPED, main="pairs")
        )
        return StageResult(kept["pairs"], kept[DROPPED])
