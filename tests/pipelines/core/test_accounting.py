"""The books every stage keeps: CountStage's counts of what a stage kept and dropped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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
from paramine.pipelines.core.batches import Rows
from paramine.schemas.run_counts import StageCounts
from paramine.schemas.stages import ALIGNED_PAIR, Stage


class TestCountBooks:
    def test_a_row_per_bundle(self) -> None:
        count = _CountOut("s", KEPT, "pair")
        rows = []
        for bundle in (["a", "b"], [], ["c"]):
            count.start_bundle()
            for element in bundle:
                list(count.process(element))
            rows += [row.value for row in count.finish_bundle()]
        assert rows == [("s", KEPT, 2), ("s", KEPT, 0), ("s", KEPT, 1)]

    def test_rows_count_as_their_elements_or_their_weights(self) -> None:
        plain = _CountOut("s", KEPT, "pair")
        weighed = _CountOut("s", KEPT, "candidate", weight=len)
        for count in (plain, weighed):
            count.start_bundle()
            list(count.process_batch(Rows(["ab", "c"])))
            list(count.process("def"))
            list(count.process_batch(Rows()))
        assert [row.value for row in plain.finish_bundle()] == [("s", KEPT, 3)]
        assert [row.value for row in weighed.finish_bundle()] == [("s", KEPT, 6)]

    @pytest.mark.pipeline
    def test_rows_reach_the_books_whole_and_single_elements_stay_single(self) -> None:
        # The count fails on a single element after a step that yields Rows,
        # and on Rows after one that yields single elements.
        with TestPipeline(runner="FnApiRunner") as p:
            lines = p | beam.Create(["a b c", "d e"])
            words = lines | "Rows" >> beam.ParDo(_WordRows())
            rows = words | "CountRows" >> beam.ParDo(_Only(Rows, "s", KEPT, "word"))
            single = lines | "Split" >> beam.FlatMap(str.split)
            singles = single | "CountSingle" >> beam.ParDo(_Only(str, "s", KEPT, "word"))
            for label, counted in (("Rows", rows), ("Single", singles)):
                total = counted | f"N{label}" >> beam.Map(lambda row: row[2])
                assert_that(
                    total | f"Sum{label}" >> beam.CombineGlobally(sum), equal_to([5]), label
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


class _WordRows(beam.DoFn):
    """Each line's words as one ``Rows``, as the reader yields its pairs."""

    @beam.DoFn.yields_batches
    def process(self, line: str) -> Iterator[Rows]:
        yield Rows(line.split())

    def get_output_batch_type(self, input_element_type: object) -> type:
        return Rows

    def infer_output_type(self, input_type: object) -> type:
        return str


class _Only(_CountOut):
    """A count that takes only ``kind``: ``Rows`` whole, or single elements."""

    def __init__(self, kind: type, *args: Any) -> None:
        super().__init__(*args)
        self.kind = kind

    def process(self, element: str) -> Iterator[int]:
        assert self.kind is str, f"{element!r} counted alone"
        return super().process(element)

    @beam.DoFn.yields_elements
    def process_batch(self, rows: Rows) -> Iterator[int]:
        assert self.kind is Rows and type(rows) is Rows, f"{rows!r} counted as a batch"
        return super().process_batch(rows)
