"""The books every stage keeps: CountStage's counts of what a stage kept and dropped."""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.accounting import (
    KEPT,
    CountStage,
    GatherCounts,
    StageResult,
    _CountOut,
    counts_from_rows,
)
from paramine.schemas.run_counts import StageCounts
from paramine.schemas.stages import ALIGNED_PAIR, Stage


class TestCountBooks:
    def test_a_row_per_bundle(self) -> None:
        count = _CountOut("s", KEPT, "pair")
        rows = []
        for bundle in (["a", "b"], [], ["c"]):
            count.start_bundle()
            list(count.process_batch(bundle))
            rows += [row.value for row in count.finish_bundle()]
        assert rows == [("s", KEPT, 2), ("s", KEPT, 0), ("s", KEPT, 1)]

    def test_a_list_counts_as_its_elements_or_their_weights(self) -> None:
        plain = _CountOut("s", KEPT, "pair")
        weighed = _CountOut("s", KEPT, "candidate", weight=len)
        for count in (plain, weighed):
            count.start_bundle()
            list(count.process_batch(["ab", "c"]))
            list(count.process_batch(["def"]))
            list(count.process_batch([]))
        assert [row.value for row in plain.finish_bundle()] == [("s", KEPT, 3)]
        assert [row.value for row in weighed.finish_bundle()] == [("s", KEPT, 6)]

    @pytest.mark.pipeline
    def test_the_runner_hands_the_books_lists(self) -> None:
        # The count defines no per-element call: the run only passes if the
        # runner gathered what the FlatMap lets out into lists for it.
        with TestPipeline(runner="FnApiRunner") as p:
            words = p | beam.Create(["a b c", "d e"]) | beam.FlatMap(str.split)
            rows = words | beam.ParDo(_ListsOnly("s", KEPT, "word"))
            assert_that(
                rows | beam.Map(lambda row: row[2]) | beam.CombineGlobally(sum), equal_to([5])
            )

    @pytest.mark.pipeline
    def test_gathered_rows_are_summed_and_every_book_is_opened(self) -> None:
        seen, empty = (Stage(name, ALIGNED_PAIR, None, "a stage") for name in ("seen", "empty"))
        partial = [("seen", "kept", 2), ("seen", "kept", 3), ("seen", "empty", 1)]
        with TestPipeline(runner="FnApiRunner") as p:
            rows = p | "Rows" >> beam.Create(partial)
            nothing = StageResult(p | "None" >> beam.Create([]), p | "NoDrops" >> beam.Create([]))
            books = nothing | CountStage(empty, taken_in=p | "NoInput" >> beam.Create([]))
            gathered = (rows, books) | GatherCounts([seen, empty], [("encoding", "texts")])

            def check(rows: list) -> None:
                assert len({row[:2] for row in rows}) == len(rows), rows  # summed per key
                counts = counts_from_rows(rows)
                assert counts.stage("seen") == StageCounts(taken_in=6, kept=5, dropped={"empty": 1})
                # An empty collection may run no bundle: the opening rows are
                # what put the empty stage and the note in the books.
                assert counts.stage("empty") == StageCounts(taken_in=0, kept=0, dropped={})
                assert counts.note("encoding") == {"texts": 0}

            assert_that(gathered, check)


class _ListsOnly(_CountOut):
    """A count that fails unless the runner hands it Python lists of the elements."""

    @beam.DoFn.yields_elements
    def process_batch(self, batch: list) -> Iterator[int]:
        assert isinstance(batch, list), batch
        return super().process_batch(batch)
