"""PostFilter: trivial pairs, pairs made twice; on request near-duplicates, eval overlap."""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.core.groups import PostFilterOptions
from paramine.pipelines.core.keep_first import KeepFirst
from paramine.pipelines.core.near_duplicates import (
    Shingled,
    band_keys,
    bucket_duplicates,
    pair_shingles,
)
from paramine.pipelines.core.text import (
    trivial_reason,
)
from paramine.schemas.records import ParaphrasePair
from paramine.schemas.stages import PARAPHRASE_PAIR, Stage
from paramine.schemas.text_keys import comparison_key

POST_FILTER = Stage(
    "PostFilter",
    PARAPHRASE_PAIR,
    (
        "equal_after_normalization",
        "near_equal",
        "inflection_variant",
        "duplicate_across_groups",
        "near_duplicate",
        "eval_overlap",
    ),
    "drop trivial pairs, the same unordered pair made by two groups, and near-duplicate pairs",
)


def postfilter_reason(
    pair: ParaphrasePair, near_equal: float, drop_inflections: bool = False
) -> str:
    """Return why a pair is trivial, or ``""`` to keep it."""
    return trivial_reason(pair.sentence_a, pair.sentence_b, near_equal, drop_inflections)


class _TrivialFn(beam.DoFn):
    def __init__(self, near_equal: float, drop_inflections: bool, excluded: frozenset[str]) -> None:
        self.near_equal = near_equal
        self.drop_inflections = drop_inflections
        self.excluded = excluded
        self.drop = Dropper(POST_FILTER)

    def process(self, pair: ParaphrasePair) -> Iterator:
        reason = postfilter_reason(pair, self.near_equal, self.drop_inflections)
        if (
            not reason
            and self.excluded
            and not self.excluded.isdisjoint(
                (comparison_key(pair.sentence_a), comparison_key(pair.sentence_b))
            )
        ):
            reason = "eval_overlap"
        if reason:
            yield self.drop(reason)
        else:
            yield pair


class PostFilter(beam.PTransform):
    """Drops pairs equal or near-equal after normalization, then cross-group duplicates.

    Args:
        options: What it drops (``None``: the defaults): a pair whose
            normalized edit similarity reaches ``near_equal``, as
            ``near_equal`` (a changed comma is no paraphrase); with
            ``drop_inflections``, pairs that differ only in word endings
            (``inflection_variants``: "Paliłem." / "Paliłam.") as
            ``inflection_variant``; with ``near_duplicates``, every pair
            whose 3-grams overlap this much with a pair of smaller id
            (core/near_duplicates.py) as ``near_duplicate`` (without, the
            report counts them).
        excluded: Normalized sentences (``comparison_key``) of evaluation
            data: a pair holding one is dropped as ``eval_overlap``.
    """

    def __init__(
        self,
        options: PostFilterOptions | None = None,
        excluded: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        options = options or PostFilterOptions()
        self.near_equal = options.near_equal
        self.drop_inflections = options.drop_inflections
        self.near_duplicates = options.near_duplicates
        self.excluded = excluded

    def expand(self, pairs: beam.PCollection) -> StageResult:
        checked = pairs | "DropTrivial" >> beam.ParDo(
            _TrivialFn(self.near_equal, self.drop_inflections, self.excluded)
        ).with_outputs(DROPPED, main="kept")
        deduped = (
            checked["kept"]
            | "KeyByPair" >> beam.Map(lambda p: (p.pair_id, p))
            # Any fixed order will do; this one keeps the pair of the smallest
            # pivot (then pivot language: one text may be a pivot in two).
            | "OnePerPair"
            >> KeepFirst(
                POST_FILTER,
                "duplicate_across_groups",
                lambda p: (p.pivot, p.pivot_lang, p.sentence_a, p.sentence_b),
            )
        )
        kept, drops = deduped.kept, [checked[DROPPED], deduped.dropped]
        if self.near_duplicates is not None:
            distinct = kept | "DropNearDuplicates" >> DropNearDuplicates(self.near_duplicates)
            kept = distinct.kept
            drops.append(distinct.dropped)
        return StageResult(kept, drops | "AllDropped" >> beam.Flatten())


class _KeepOrDropFn(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper(POST_FILTER)

    def process(self, joined: tuple[str, dict[str, list]]) -> Iterator:
        _, sides = joined
        for pair in sides["pair"]:
            yield self.drop("near_duplicate") if sides["earlier"] else pair


class DropNearDuplicates(beam.PTransform):
    """Drops the near-duplicates of the dataset's pairs (core/near_duplicates.py).

    Each pair goes to its MinHash bands' buckets (a shuffle on the band
    keys); a bucket of two or more decides its near-duplicates; a pair found
    in any bucket is dropped. Only the pairs' ids and 3-gram sets travel.
    """

    def __init__(self, similarity: float) -> None:
        super().__init__()
        self.similarity = similarity

    def expand(self, pairs: beam.PCollection) -> StageResult:
        similarity = self.similarity
        found = (
            pairs
            | "Shingle"
            >> beam.Map(lambda p: Shingled(p.pair_id, pair_shingles(p.sentence_a, p.sentence_b)))
            | "Bands"
            >> beam.FlatMap(lambda s: ((key, s) for key in band_keys(s.shingles, similarity)))
            | "Buckets" >> beam.GroupByKey()
            | "Decide" >> beam.FlatMap(lambda bucket: bucket_duplicates(bucket[1], similarity))
            | "OnePerDuplicate" >> beam.CombinePerKey(min)
        )
        joined = (
            {"pair": pairs | "ById" >> beam.Map(lambda p: (p.pair_id, p)), "earlier": found}
            | "JoinVerdicts" >> beam.CoGroupByKey()
            | "KeepOrDrop" >> beam.ParDo(_KeepOrDropFn()).with_outputs(DROPPED, main="kept")
        )
        return StageResult(joined["kept"], joined[DROPPED])
