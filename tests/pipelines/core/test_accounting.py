"""The books every stage keeps: CountStage's counts, KeepFirst's first occurrence and count."""

from __future__ import annotations

import random

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
    _FirstAndCount,
    counts_from_rows,
)
from paramine.schemas.stages import ALIGNED_PAIR, Stage


class TestCountBooks:
    def test_a_row_per_bundle(self) -> None:
        count = _CountOut("s", KEPT, "pair", progress=False)
        rows = []
        for bundle in (["a", "b"], [], ["c"]):
            count.start_bundle()
            for element in bundle:
                list(count.process(element))
            rows += [row.value for row in count.finish_bundle()]
        assert rows == [("s", KEPT, 2), ("s", KEPT, 0), ("s", KEPT, 1)]

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
                assert counts["seen"] == {"in": 6, "kept": 5, "dropped": {"empty": 1}}
                # An empty collection may run no bundle: the opening rows are
                # what put the empty stage and the note in the books.
                assert counts["empty"] == {"in": 0, "kept": 0, "dropped": {}}
                assert counts["encoding"] == {"texts": 0}

            assert_that(gathered, check)


class TestKeepFirst:
    def test_the_first_and_the_count_in_any_order_and_split(self) -> None:

        rng = random.Random(3)
        combine = _FirstAndCount(None)
        for n in (1, 2, 3, 10):
            values = [f"shard\x00{rng.randrange(1000):020d}" for _ in range(n)]
            for _ in range(10):
                rng.shuffle(values)
                cut = rng.randrange(0, n + 1)
                accumulators = []
                for part in (values[:cut], values[cut:]):
                    accumulator = combine.create_accumulator()
                    for value in part:
                        accumulator = combine.add_input(accumulator, value)
                    accumulators.append(accumulator)
                merged = combine.merge_accumulators(accumulators)
                assert combine.extract_output(merged) == (min(values), n)

    def test_a_key_seen_once_holds_its_element_alone(self) -> None:
        # The runner holds one accumulator per distinct key: no tuple beside it.
        combine = _FirstAndCount(len)
        once = combine.add_input(combine.create_accumulator(), "abc")
        assert once == "abc"
        assert combine.merge_accumulators([None, once, None]) == "abc"
        twice = combine.add_input(once, "ab")
        assert combine.extract_output(twice) == ("ab", 2)
        with pytest.raises(TypeError, match="no lists"):
            combine.add_input(once, ["a list"])
