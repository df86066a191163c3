"""PairGroups: paraphrase pairs inside each group, then the post-filter, with books.

groups | "MakePairs" | "PostFilter" -> paraphrase pairs
"""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.core.accounting import CountStage, StageResult
from paramine.pipelines.core.groups import group_weight
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.post_filter import POST_FILTER, PostFilter
from paramine.pipelines.stages.pair.make_pairs import MAKE_PAIRS, MadePairs, MakePairs
from paramine.schemas.stages import Stage


def _candidates(paired: int) -> int:
    return paired


class PairedGroups(NamedTuple):
    """What ``PairGroups`` yields.

    Attributes:
        made: MakePairs' output: the new pairs, its books, and the old pairs
            kept or gone (``previous``).
        filtered: PostFilter's books: the pairs that stay, and the drops.
        counts: Count rows of both stages' books.
    """

    made: MadePairs
    filtered: StageResult
    counts: beam.PCollection


class PairGroups(beam.PTransform):
    """Makes the pairs of each ``Group`` and drops the trivial and duplicate ones.

    Args:
        settings: What decides the pairs (the pair mode and the post-filter's rules).
        excluded: Normalized evaluation sentences that no pair may hold
            (run/eval_exclusion.py); PostFilter drops such pairs.
        previous: A refresh's old pairs of the pivots it mines again
            (``MakePairs``' ``previous``).
    """

    #: The stages whose books this keeps, in order.
    STAGES: tuple[Stage, ...] = (MAKE_PAIRS, POST_FILTER)

    def __init__(
        self,
        settings: MiningSettings,
        excluded: frozenset[str] = frozenset(),
        previous: beam.PCollection | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.excluded = excluded
        self.previous = previous

    def expand(self, groups: beam.PCollection) -> PairedGroups:
        settings = self.settings
        made = groups | "MakePairs" >> MakePairs(
            settings.make_pairs_options, settings.post_filter_options, self.previous
        )
        filtered = made.pairs | "PostFilter" >> PostFilter(
            settings.post_filter_options, self.excluded
        )
        counts = (
            made.books
            | "CountMakePairs"
            >> CountStage(MAKE_PAIRS, taken_in=groups, weight=_candidates, in_weight=group_weight),
            filtered | "CountPostFilter" >> CountStage(POST_FILTER, taken_in=made.pairs),
        ) | "Counts" >> beam.Flatten()
        return PairedGroups(made, filtered, counts)
