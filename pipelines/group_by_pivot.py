"""Grouping by pivot, twice: before scoring (GroupCandidates) and after the cut (GroupByPivot).

Before scoring, ``GroupCandidates`` keeps only the aligned pairs of pivots
with two or more distinct candidates (capped per pivot): nothing else can
ever become a paraphrase pair, so nothing else is encoded. After the
threshold, ``GroupByPivot`` gathers the candidates that passed into groups;
a group left with fewer than two is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import apache_beam as beam
from paramine.pipelines.accounting import DROPPED, Dropper, StageResult
from paramine.schemas.digest import stable_hash
from paramine.schemas.records import AlignedPair, ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

GROUP = Stage(
    "group",
    ALIGNED_PAIR,
    ("single_candidate", "over_group_cap"),
    "before scoring: keep pivots with two or more distinct candidates (capped); the rest can "
    "never make a pair and is never encoded",
)
REGROUP = Stage(
    "regroup",
    ALIGNED_PAIR,
    # over_group_cap only where GroupByPivot runs on its own: in the mine
    # pipeline GroupCandidates has already capped every group.
    ("duplicate_candidate", "singleton_group", "over_group_cap"),
    "after the cut: one pair per distinct candidate; groups left with one candidate dropped",
)


def pivot_key(pivot: str) -> str:
    """The grouping key of a (normalized) pivot: "Thank you." == "thank you."."""
    return pivot.casefold()


@dataclass(frozen=True)
class Group:
    """The distinct candidates of one pivot, in a stable order."""

    key: str
    pivot: str
    pivot_lang: str
    lang: str
    candidates: tuple[ScoredPair, ...]


@dataclass
class _Accumulator:
    # candidate text -> (rank hash, first occurrence, occurrences)
    kept: dict[str, tuple[int, ScoredPair, int]] = field(default_factory=dict)
    seen: int = 0
    pivot: str | None = None


def _earlier(a: ScoredPair, b: ScoredPair) -> bool:
    return (a.pair.shard, a.pair.line) < (b.pair.shard, b.pair.line)


class CandidateGroupFn(beam.CombineFn):
    """Keeps, per pivot, at most ``cap`` distinct candidates with the lowest hashes.

    Bounded state per key whatever its frequency: a hot pivot ("Yes.") with
    a million candidates costs ``cap`` entries, not a million. The kept set is
    the ``cap`` lowest hashes of all distinct candidates, whatever the order
    of inputs and merges, so output is deterministic. A candidate dropped from
    a partial set can never come back in the final one (that partial already
    held ``cap`` lower hashes), so duplicate counts of kept candidates are exact.
    """

    def __init__(self, cap: int) -> None:
        if cap < 2:
            raise ValueError(f"max_group_size must be at least 2, got {cap}")
        self.cap = cap

    def create_accumulator(self) -> _Accumulator:
        return _Accumulator()

    def _offer(self, acc: _Accumulator, rank: int, first: ScoredPair, n: int) -> None:
        text = first.pair.candidate
        held = acc.kept.get(text)
        if held is not None:
            earliest = first if _earlier(first, held[1]) else held[1]
            acc.kept[text] = (rank, earliest, held[2] + n)
            return
        if len(acc.kept) < self.cap:
            acc.kept[text] = (rank, first, n)
            return
        worst = max(acc.kept, key=lambda t: acc.kept[t][0])
        if rank < acc.kept[worst][0]:
            del acc.kept[worst]
            acc.kept[text] = (rank, first, n)

    def add_input(self, acc: _Accumulator, scored: ScoredPair) -> _Accumulator:
        pair = scored.pair
        acc.seen += 1
        acc.pivot = pair.pivot if acc.pivot is None else min(acc.pivot, pair.pivot)
        rank = stable_hash(pivot_key(pair.pivot), pair.candidate)
        self._offer(acc, rank, scored, 1)
        return acc

    def merge_accumulators(self, accs: Iterable[_Accumulator]) -> _Accumulator:
        merged = _Accumulator()
        for acc in accs:
            merged.seen += acc.seen
            if acc.pivot is not None:
                merged.pivot = acc.pivot if merged.pivot is None else min(merged.pivot, acc.pivot)
            for rank, first, n in acc.kept.values():
                self._offer(merged, rank, first, n)
        return merged

    def extract_output(self, acc: _Accumulator) -> _Accumulator:
        return acc


class _EmitGroup(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper(REGROUP)

    def process(self, keyed: tuple[str, _Accumulator]) -> Iterator:
        key, acc = keyed
        entries = sorted(acc.kept.values(), key=lambda e: e[0])
        in_kept = sum(n for _, _, n in entries)
        if in_kept > len(entries):
            yield self.drop("duplicate_candidate", in_kept - len(entries))
        if acc.seen > in_kept:
            yield self.drop("over_group_cap", acc.seen - in_kept)
        if len(entries) < 2:
            yield self.drop("singleton_group", len(entries))
            return
        first = entries[0][1].pair
        yield Group(
            key=key,
            pivot=acc.pivot or first.pivot,
            pivot_lang=first.pivot_lang,
            lang=first.lang,
            candidates=tuple(e[1] for e in entries),
        )


def group_weight(group: Group) -> int:
    """The number of candidates a group holds, for the accounting identity."""
    return len(group.candidates)


class GroupByPivot(beam.PTransform):
    """After the cut: groups scored pairs by normalized pivot into capped, distinct candidate sets.

    Counted under the ``regroup`` stage. Its input unit is a scored pair and
    its output a ``Group``: count it with ``group_weight`` so that the stage
    balances in candidates, not groups.
    """

    def __init__(self, max_group_size: int = 50) -> None:
        super().__init__()
        self.combine = CandidateGroupFn(max_group_size)

    def expand(self, scored: beam.PCollection) -> StageResult:
        groups = (
            scored
            | "KeyByPivot" >> beam.Map(lambda s: (pivot_key(s.pair.pivot), s))
            | "CapDistinctCandidates" >> beam.CombinePerKey(self.combine)
            | "EmitGroups" >> beam.ParDo(_EmitGroup()).with_outputs(DROPPED, main="groups")
        )
        return StageResult(groups["groups"], groups[DROPPED])


# ------------------------------------------------------------ before scoring


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

    def process(self, keyed: tuple[str, _CandidateSet]) -> Iterator:
        _, acc = keyed
        if len(acc.kept) < 2:
            # One distinct candidate can never make a pair, whatever its score.
            yield self.drop("single_candidate", acc.seen)
            return
        pairs = [pair for _, variants in acc.kept.values() for pair in variants.values()]
        if acc.seen > len(pairs):
            yield self.drop("over_group_cap", acc.seen - len(pairs))
        yield from sorted(pairs, key=lambda p: (p.shard, p.line))


class GroupCandidates(beam.PTransform):
    """Before scoring: keeps the aligned pairs of pivots that have two or more distinct candidates.

    Counted under the ``group`` stage. A pivot with a single distinct
    candidate can never produce a paraphrase pair, so its pairs are dropped
    here, unencoded (on Tatoeba eng-pol 9,775 of 9,934 pivots). Hot pivots
    keep ``max_group_size`` distinct candidates, chosen by hash.
    """

    def __init__(self, max_group_size: int = 50) -> None:
        super().__init__()
        self.combine = CandidateSetFn(max_group_size)

    def expand(self, pairs: beam.PCollection) -> StageResult:
        kept = (
            pairs
            | "KeyByPivot" >> beam.Map(lambda p: (pivot_key(p.pivot), p))
            | "CapDistinctCandidates" >> beam.CombinePerKey(self.combine)
            | "EmitCandidates" >> beam.ParDo(_EmitCandidates()).with_outputs(DROPPED, main="pairs")
        )
        return StageResult(kept["pairs"], kept[DROPPED])
