"""PostFilter: drop trivial pairs and pairs that several groups produced."""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, KeepFirst, StageResult
from paramine.pipelines.core.text import (
    trivial_reason,
)
from paramine.schemas.records import ParaphrasePair
from paramine.schemas.stages import PARAPHRASE_PAIR, Stage

POSTFILTER = Stage(
    "postfilter",
    PARAPHRASE_PAIR,
    ("equal_after_normalization", "near_equal", "inflection_variant", "duplicate_across_groups"),
    "drop trivial pairs and the same unordered pair made by two groups",
)


def postfilter_reason(
    pair: ParaphrasePair, near_equal: float, drop_inflections: bool = False
) -> str:
    """Return why a pair is trivial, or ``""`` to keep it."""
    return trivial_reason(pair.sentence_a, pair.sentence_b, near_equal, drop_inflections)


class _TrivialFn(beam.DoFn):
    def __init__(self, near_equal: float, drop_inflections: bool) -> None:
        self.near_equal = near_equal
        self.drop_inflections = drop_inflections
        self.drop = Dropper(POSTFILTER)

    def process(self, pair: ParaphrasePair) -> Iterator:
        reason = postfilter_reason(pair, self.near_equal, self.drop_inflections)
        if reason:
            yield self.drop(reason)
        else:
            yield pair


class PostFilter(beam.PTransform):
    """Drops pairs equal or near-equal after normalization, then cross-group duplicates.

    Args:
        near_equal: Pairs whose normalized edit similarity is at least this
            are dropped as ``near_equal`` (a changed comma is no paraphrase).
        drop_inflections: Also drop pairs that differ only in word endings
            (``inflection_variants``: "Paliłem." / "Paliłam.") as
            ``inflection_variant``.
    """

    def __init__(self, near_equal: float = 0.95, drop_inflections: bool = False) -> None:
        super().__init__()
        if not 0 < near_equal <= 1:
            raise ValueError(f"near_equal must be in (0, 1], got {near_equal}")
        self.near_equal = near_equal
        self.drop_inflections = drop_inflections

    def expand(self, pairs: beam.PCollection) -> StageResult:
        checked = pairs | "DropTrivial" >> beam.ParDo(
            _TrivialFn(self.near_equal, self.drop_inflections)
        ).with_outputs(DROPPED, main="kept")
        deduped = (
            checked["kept"]
            | "KeyByPair" >> beam.Map(lambda p: (p.pair_id, p))
            # Any fixed order will do; this one keeps the pair of the smallest
            # pivot (then pivot language: one text may be a pivot in two).
            | "OnePerPair"
            >> KeepFirst(
                POSTFILTER,
                "duplicate_across_groups",
                lambda p: (p.pivot, p.pivot_lang, p.sentence_a, p.sentence_b),
            )
        )
        dropped = (checked[DROPPED], deduped.dropped) | "AllDropped" >> beam.Flatten()
        return StageResult(deduped.kept, dropped)
