"""RegroupByPivot: the candidates that passed, per pivot; the cap deterministic and counted."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that
from paramine.pipelines.core.accounting import (
    CountStage,
)
from paramine.pipelines.core.groups import Group, GroupOptions, group_weight
from paramine.pipelines.stages.group.group_by_pivot import GROUP_BY_PIVOT
from paramine.pipelines.stages.group.regroup_by_pivot import CandidateGroupFn, RegroupByPivot
from paramine.schemas.errors import UsageError
from paramine.schemas.records import ScoredPair

from tests.pipelines.stages.helpers import counts_equal, scored


class TestRegroupByPivot:
    @pytest.mark.pipeline
    def test_groups_distinct_candidates_by_normalized_pivot(self) -> None:
        elements = [
            scored("Thank you.", "Dziękuję.", line=1),
            scored("thank you.", "Dzięki.", line=2),
            scored("Thank you.", "Dziękuję.", line=3),
            scored("Alone.", "Sam.", line=4),
        ]

        def one_group(groups: list[Group]) -> None:
            assert len(groups) == 1
            group = groups[0]
            assert (group.key, group.pivot) == ("thank you.", "Thank you.")
            # The first occurrence (line 1) stands for the duplicate candidate.
            assert sorted((c.pair.candidate, c.pair.line) for c in group.candidates) == [
                ("Dzięki.", 2),
                ("Dziękuję.", 1),
            ]

        with TestPipeline(runner="FnApiRunner") as p:
            result = p | beam.Create(elements) | RegroupByPivot(GroupOptions(max_group_size=50))
            assert_that(result.kept, one_group, label="Kept")
            rows = result | CountStage(GROUP_BY_PIVOT, weight=group_weight)
            expected = {
                "in": 4,
                "kept": 2,
                "dropped": {"duplicate_candidate": 1, "singleton_group": 1},
            }
            assert_that(rows, counts_equal("GroupByPivot", expected), label="Counts")

    def test_cap_is_deterministic_and_counted(self) -> None:
        elements = [scored("Yes.", f"Tak {i}.", line=i) for i in range(40)]
        fn = CandidateGroupFn(cap=5)
        forward = fn.extract_output(
            fn.merge_accumulators(
                [
                    _fold(fn, elements[:13]),
                    _fold(fn, elements[13:]),
                ]
            )
        )
        backward = fn.extract_output(
            fn.merge_accumulators([_fold(fn, elements[::-1][:7]), _fold(fn, elements[::-1][7:])])
        )
        assert set(forward.kept) == set(backward.kept)
        assert len(forward.kept) == 5 and forward.seen == 40

    def test_cap_below_two_is_refused(self) -> None:
        with pytest.raises(UsageError, match=r"^--max-group-size 1 must be at least 2$"):
            RegroupByPivot(GroupOptions(max_group_size=1))


def _fold(fn: CandidateGroupFn, elements: list[ScoredPair]):
    acc = fn.create_accumulator()
    for element in elements:
        acc = fn.add_input(acc, element)
    return acc
