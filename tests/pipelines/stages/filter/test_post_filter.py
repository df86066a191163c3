"""PostFilter: trivial, near-equal and cross-group duplicate pairs dropped, each by reason."""

from __future__ import annotations

import pytest
from apache_beam.testing.util import equal_to
from paramine.pipelines.core.groups import PostFilterOptions
from paramine.pipelines.stages.filter.post_filter import PostFilter, postfilter_reason
from paramine.schemas.errors import UsageError

from tests.pipelines.stages.helpers import check_stage, paraphrase


class TestPostFilter:
    @pytest.mark.pipeline
    def test_drops_trivial_near_equal_and_cross_group_duplicates(self) -> None:
        elements = [
            paraphrase("Nie rozumiem.", "nie rozumiem"),
            paraphrase(
                "To jest bardzo długie zdanie o kotach.", "To jest bardzo długie zdanie o kotach!"
            ),
            paraphrase(
                "To jest bardzo długie zdanie o kotach.", "To jest bardzo dlugie zdanie o kotach."
            ),
            paraphrase("Idę spać.", "Kładę się spać.", pivot="I'm going to bed."),
            paraphrase("Kładę się spać.", "Idę spać.", pivot="I go to bed."),
            paraphrase("Dziękuję.", "Dzięki."),
        ]
        # Of the two orders of one pair, the row of the smallest pivot stays.
        check_stage(
            PostFilter(PostFilterOptions(near_equal=0.95)),
            elements,
            equal_to([elements[4], elements[5]]),
            {
                "in": 6,
                "kept": 2,
                "dropped": {
                    "duplicate_across_groups": 1,
                    "equal_after_normalization": 2,
                    "near_equal": 1,
                },
            },
        )

    def test_near_equal_bound_is_checked(self) -> None:
        with pytest.raises(UsageError, match=r"^--near-equal 1.5 must be in \(0, 1\]$"):
            PostFilter(PostFilterOptions(near_equal=1.5))

    def test_word_ending_variants_follow_drop_inflections_whatever_their_length(self) -> None:
        # Edit similarity 0.97: near-equal by that measure, yet a gender
        # variant like the short "Jesteś zła?" / "Jesteś zły?", which stays.
        long = (
            "Nikdy jsem neřekl, že jsi nudná a že tě nemám rád.",
            "Nikdy jsem neřekl, že jsi nudný a že tě nemám rád.",
        )
        short = ("Jesteś zła?", "Jesteś zły?")
        for a_, b_ in (long, short):
            assert postfilter_reason(paraphrase(a_, b_), 0.95) == ""
            assert postfilter_reason(paraphrase(a_, b_), 0.95, True) == "inflection_variant"
        # A changed letter inside a word is no ending: still near-equal.
        typo = paraphrase("To jest bardzo długie zdanie.", "To jest bardzo dlugie zdanie.")
        assert postfilter_reason(typo, 0.95, True) == "near_equal"
