"""RegroupByPivot: after the cut, the candidates that passed, grouped by pivot.

A group left with fewer than two distinct candidates is dropped: it can
make no pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.core.groups import Group, GroupKey, GroupOptions, group_key, pivot_key
from paramine.schemas.records import ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage
from paramine.schemas.text_keys import stable_hash

REGROUP_BY_PIVOT = Stage(
    "RegroupByPivot",
    ALIGNED_PAIR,
    # over_group_cap only where RegroupByPivot runs on its own: in the mine
    # pipeline GroupByPivot has already capped every group.
    ("duplicate_candidate", "singleton_group", "over_group_cap"),
    "after the cut: one pair per distinct candidate; groups left with one candidate dropped",
)


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
        self.cap = cap  # checked where it is given: GroupOptions.max_group_size

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
        self.drop = Dropper(REGROUP_BY_PIVOT)

    def process(self, keyed: tuple[GroupKey, _Accumulator]) -> Iterator:
        (_, key), acc = keyed
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


class RegroupByPivot(beam.PTransform):
    """After the cut: groups scored pairs by pivot (language and text) into capped candidate sets.

    Counted under the ``regroup`` stage. Its input unit is a scored pair and
    its output a ``Group``: count it with ``group_weight`` so that the stage
    balances in candidates, not groups.

    Args:
        options: The cap (``GroupOptions.max_group_size``); ``None``: the defaults.
    """

    def __init__(self, options: GroupOptions | None = None) -> None:
        super().__init__()
        self.combine = CandidateGroupFn((options or GroupOptions()).max_group_size)

    def expand(self, scored: beam.PCollection) -> StageResult:
        groups = (
            scored
            | "KeyByPivot" >> beam.Map(lambda s: (group_key(s.pair.pivot_lang, s.pair.pivot), s))
            | "CapDistinctCandidates" >> beam.CombinePerKey(self.combine)
            | "EmitGroups" >> beam.ParDo(_EmitGroup()).with_outputs(DROPPED, main="groups")
        )
        return StageResult(groups["groups"], groups[DROPPED])
