"""The books every stage keeps: CountStage's counts of what a stage kept and dropped."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that
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
            for element in bundle:
                list(count.process(element))
            rows += [row.value for row in count.finish_bundle()]
        assert rows == [("s", KEPT, 2), ("s", KEPT, 0), ("s", KEPT, 1)]

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
