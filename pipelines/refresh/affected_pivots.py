"""AffectedPivots: which pivots a refresh must mine again; their rows go on, the rest stay.

A refresh mines only what can change: the pivots with a new or retracted
row, and those that share a candidate with one (their rival pivots, in the
candidate's pivot language). Every other pivot's rows and pairs stay in the
table as they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.core.groups import GroupKey, group_key, pivot_language
from paramine.pipelines.core.text import comparison_key
from paramine.schemas.records import AlignedPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

AFFECTED_PIVOTS = Stage(
    "AffectedPivots",
    ALIGNED_PAIR,
    ("unchanged",),
    "the new pairs and the state's pairs of every pivot whose pairs can change go on to be "
    "mined; the other pivots' rows and pairs stay in the table as they are",
)


def _candidate_keys_of_direct(
    joined: tuple[GroupKey, dict[str, list]],
) -> Iterator[tuple[str, str]]:
    _, sides = joined
    if sides["direct"]:
        yield from set(sides["candidates"])


def _candidate_key(pair: AlignedPair) -> tuple[str, str]:
    """A candidate among the pivots of one language: where the contest looks for rivals."""
    return pivot_language(pair.pivot_lang), comparison_key(pair.candidate)


def _pivots_of_changed_candidates(
    joined: tuple[tuple[str, str], dict[str, list]],
) -> Iterator[GroupKey]:
    _, sides = joined
    if sides["changed"]:
        yield from set(sides["pivots"])


class _AffectedKeys(beam.PTransform):
    """The group keys (pivot language, pivot key) whose pairs a change of rows can change.

    A pivot is affected when it has a new or retracted row (its group
    changed), or when one of its candidates is also the candidate of such a
    pivot's row (a rival pivot that joined, left, or became a group: the
    contest of ``pipelines/stages/group/contest_candidates.py`` may now decide otherwise).

    Args:
        current: Every aligned pair after the change (state kept + new).
        retracted: The aligned pairs retracted.
    """

    def __init__(self, current: beam.PCollection, retracted: beam.PCollection) -> None:
        super().__init__()
        self.current = current
        self.retracted = retracted

    def expand(self, new: beam.PCollection) -> beam.PCollection:
        direct = (
            (new, self.retracted)
            | "Changed" >> beam.Flatten()
            | "ChangedPivots" >> beam.Map(lambda p: group_key(p.pivot_lang, p.pivot))
            | "DistinctDirect" >> beam.Distinct()
        )
        everything = (self.current, self.retracted) | "AllRows" >> beam.Flatten()
        candidate_keys = (
            {
                "direct": direct | "DirectKeyed" >> beam.Map(lambda k: (k, None)),
                "candidates": everything
                | "CandidatesByPivot"
                >> beam.Map(lambda p: (group_key(p.pivot_lang, p.pivot), _candidate_key(p))),
            }
            | "JoinDirect" >> beam.CoGroupByKey()
            | "TheirCandidates" >> beam.FlatMap(_candidate_keys_of_direct)
            | "DistinctCandidates" >> beam.Distinct()
        )
        via_candidates = (
            {
                "changed": candidate_keys | "CandidateKeyed" >> beam.Map(lambda c: (c, None)),
                "pivots": self.current
                | "PivotsByCandidate"
                >> beam.Map(lambda p: (_candidate_key(p), group_key(p.pivot_lang, p.pivot))),
            }
            | "JoinCandidates" >> beam.CoGroupByKey()
            | "TheirPivots" >> beam.FlatMap(_pivots_of_changed_candidates)
        )
        return (direct, via_candidates) | "Both" >> beam.Flatten() | "Distinct" >> beam.Distinct()


class _SplitAffectedFn(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper(AFFECTED_PIVOTS)

    def process(self, joined: tuple[GroupKey, dict[str, list]]) -> Iterator:
        _, sides = joined
        affected = bool(sides["affected"])
        for row in sides["rows"]:
            if affected:
                yield row
            else:
                yield self.drop("unchanged")
                yield beam.pvalue.TaggedOutput("unchanged", row)


class Affected(NamedTuple):
    """What ``AffectedPivots`` finds.

    Attributes:
        keys: The group keys to mine again.
        books: The state rows of those pivots (kept) and ``(unchanged, n)`` drops.
        unchanged: The other rows, which stay as they are.
    """

    keys: beam.PCollection
    books: StageResult
    unchanged: beam.PCollection


class AffectedPivots(beam.PTransform):
    """Splits the current rows (``StateRow``) into those of affected pivots and the rest.

    Applied to the new aligned pairs.

    Args:
        rows: Every state row after the change (the state kept and the new pairs).
        retracted: The aligned pairs retracted.
    """

    def __init__(self, rows: beam.PCollection, retracted: beam.PCollection) -> None:
        super().__init__()
        self.rows = rows
        self.retracted = retracted

    def expand(self, new: beam.PCollection) -> Affected:
        current = self.rows | "CurrentPairs" >> beam.Map(lambda r: r.pair)
        keys = new | "Keys" >> _AffectedKeys(current, self.retracted)
        split = (
            {
                "affected": keys | "AffectedKeyed" >> beam.Map(lambda k: (k, None)),
                "rows": self.rows
                | "RowsByPivot"
                >> beam.Map(lambda r: (group_key(r.pair.pivot_lang, r.pair.pivot), r)),
            }
            | "JoinAffected" >> beam.CoGroupByKey()
            | "Split"
            >> beam.ParDo(_SplitAffectedFn()).with_outputs(DROPPED, "unchanged", main="affected")
        )
        return Affected(keys, StageResult(split["affected"], split[DROPPED]), split["unchanged"])
