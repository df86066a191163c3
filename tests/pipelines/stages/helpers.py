"""Records and checks shared by the stages' tests: build records, apply a stage, read its books."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that
from paramine.pipelines.core.accounting import (
    CountStage,
    counts_from_rows,
)
from paramine.pipelines.stages.pair.make_pairs import pair_id
from paramine.schemas.records import AlignedPair, ParaphrasePair, ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage


def aligned(pivot: str, candidate: str, line: int = 1, shard: str = "s") -> AlignedPair:
    return AlignedPair(pivot, candidate, "en", "pl", "test", shard, line)


def scored(pivot: str, candidate: str, score: float = 0.9, line: int = 1) -> ScoredPair:
    return ScoredPair(aligned(pivot, candidate, line), score)


def paraphrase(a: str, b: str, pivot: str = "Hi.") -> ParaphrasePair:
    return ParaphrasePair(a, b, "pl", pivot, "en", 0.9, 0.8, 2, "test", pair_id("pl", a, b))


def counts_equal(stage: str, expected: dict):
    """A matcher of CountStage rows: the stage's counts equal ``expected``."""

    def check(rows: list) -> None:
        actual = counts_from_rows(rows).stage(stage).to_json()
        assert actual == expected, f"{actual} != {expected}"

    return check


def check_stage(transform: beam.PTransform, elements: list, kept, counts: dict) -> None:
    """Apply a stage to ``elements``; assert on what it keeps and its counts."""
    with TestPipeline(runner="FnApiRunner") as p:
        result = p | beam.Create(elements) | transform
        assert_that(result.kept, kept, label="Kept")
        stage = Stage("s", ALIGNED_PAIR, None, "the stage under test")
        assert_that(result | CountStage(stage), counts_equal("s", counts), label="Counts")
