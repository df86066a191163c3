"""MakePairs: cover and all, seeded from the pivot; cover avoids trivial pairs."""

from __future__ import annotations

import math

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.accounting import (
    CountStage,
)
from paramine.pipelines.core.groups import Group, MakePairsOptions, group_weight
from paramine.pipelines.stages.filter.post_filter import postfilter_reason
from paramine.pipelines.stages.pair.make_pairs import MAKE_PAIRS, MakePairs, make_pairs
from paramine.schemas.errors import UsageError

from tests.pipelines.stages.helpers import counts_equal, scored


def _group(n: int, pivot: str = "Yes.") -> Group:
    candidates = tuple(scored(pivot, f"Zdanie numer {i}.", line=i) for i in range(n))
    return Group(pivot.casefold(), pivot, "en", "pl", candidates)


class TestMakePairs:
    @pytest.mark.parametrize("n", [2, 3, 4, 5, 9])
    def test_cover_mode_covers_every_candidate(self, n: int) -> None:
        pairs = make_pairs(_group(n), "cover")
        assert len(pairs) == math.ceil(n / 2)
        covered = {s for p in pairs for s in (p.sentence_a, p.sentence_b)}
        assert covered == {f"Zdanie numer {i}." for i in range(n)}
        assert all(p.sentence_a != p.sentence_b for p in pairs)
        assert all(p.group_size == n for p in pairs)

    def test_all_mode_is_every_pair_capped(self) -> None:
        assert len(make_pairs(_group(5), "all")) == 10
        assert len(make_pairs(_group(10), "all", max_pairs=7)) == 7

    def test_seeded_from_the_pivot(self) -> None:
        assert make_pairs(_group(9), "cover") == make_pairs(_group(9), "cover")

    @pytest.mark.pipeline
    def test_transform(self) -> None:
        with TestPipeline(runner="FnApiRunner") as p:
            pairs = (
                p
                | beam.Create([_group(3), _group(2, "No.")])
                | MakePairs(MakePairsOptions("cover"))
            )
            pairs = pairs.pairs
            assert_that(pairs | beam.combiners.Count.Globally(), equal_to([3]))

    @pytest.mark.parametrize(
        ("mode", "books"),
        [
            ("cover", {"in": 10, "kept": 10, "dropped": {}}),
            # Two pairs of ten candidates leave six in no pair.
            ("all", {"in": 10, "kept": 4, "dropped": {"over_pair_cap": 6}}),
        ],
    )
    @pytest.mark.pipeline
    def test_books_count_candidates_and_those_the_cap_leaves_unpaired(
        self, mode: str, books: dict
    ) -> None:
        with TestPipeline(runner="FnApiRunner") as p:
            groups = p | beam.Create([_group(10)])
            made = groups | MakePairs(MakePairsOptions(mode, max_pairs_per_group=2))
            rows = made.books | CountStage(
                MAKE_PAIRS, taken_in=groups, weight=lambda n: n, in_weight=group_weight
            )
            assert_that(rows, counts_equal("MakePairs", books))

    def test_unknown_mode_is_refused(self) -> None:
        with pytest.raises(UsageError, match=r"^--pair-mode 'some'; allowed: cover, all$"):
            MakePairs(MakePairsOptions("some"))


class TestCoverAvoidsTrivialPairs:
    def _group(self, texts: list[str]) -> Group:
        candidates = tuple(scored("Are you angry?", t, line=i) for i, t in enumerate(texts))
        return Group("are you angry?", "Are you angry?", "en", "pl", candidates)

    def test_trivial_variants_are_paired_with_others(self) -> None:
        texts = ["Jesteś zły?", "jesteś zły", "Czy jesteś zły?", "Czy jesteś zły"]
        for seed in range(20):
            group = self._group(texts)
            group = Group(f"k{seed}", group.pivot, "en", "pl", group.candidates)
            pairs = make_pairs(group, "cover")
            kept = [p for p in pairs if not postfilter_reason(p, 0.95)]
            covered = {s for p in kept for s in (p.sentence_a, p.sentence_b)}
            assert covered == set(texts), seed
            assert len(pairs) == 2

    def test_a_group_of_only_variants_still_pairs_and_postfilter_drops_it(self) -> None:
        pairs = make_pairs(self._group(["Tak.", "tak"]), "cover")
        assert len(pairs) == 1 and postfilter_reason(pairs[0], 0.95) == "equal_after_normalization"

    def test_with_drop_inflections_word_ending_variants_are_paired_with_others(self) -> None:
        texts = ["Jesteś zły?", "Jesteś zła?", "Czy jesteś zły?", "Czy jesteś zła?"]
        for seed in range(20):
            group = self._group(texts)
            group = Group(f"k{seed}", group.pivot, "en", "pl", group.candidates)
            pairs = make_pairs(group, "cover", drop_inflections=True)
            kept = [p for p in pairs if not postfilter_reason(p, 0.95, True)]
            covered = {s for p in kept for s in (p.sentence_a, p.sentence_b)}
            assert covered == set(texts), seed

    def test_odd_one_out_avoids_its_variant(self) -> None:
        texts = ["Jesteś zły?", "Czy jesteś zły?", "jesteś zły"]
        for seed in range(20):
            group = self._group(texts)
            group = Group(f"k{seed}", group.pivot, "en", "pl", group.candidates)
            kept = [p for p in make_pairs(group, "cover") if not postfilter_reason(p, 0.95)]
            assert {s for p in kept for s in (p.sentence_a, p.sentence_b)} == set(texts), seed
