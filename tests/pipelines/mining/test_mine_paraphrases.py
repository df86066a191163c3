"""MineParaphrases as a user would drop it into a Beam pipeline of their own."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.accounting import counts_from_rows
from paramine.pipelines.mining.mine_paraphrases import MINE_STAGES, MineParaphrases
from paramine.pipelines.settings.mining import MiningSettings
from paramine.schemas.records import AlignedPair
from paramine.schemas.stages import accounting_errors


def aligned(pivot: str, candidate: str, line: int) -> AlignedPair:
    return AlignedPair(pivot, candidate, "en", "pl", "mine", "memory://bitext", line)


BITEXT = [
    aligned("Good night.", "Dobranoc.", 1),
    aligned("Good night.", "Spokojnej nocy.", 2),
    aligned("Good night.", "Dobrej nocy.", 3),
    aligned("Thank you.", "Dziękuję.", 4),
    aligned("Thank you.", "Dzięki.", 5),
    aligned("I see.", "Rozumiem.", 6),  # one candidate: can never make a pair
    aligned("", "Pusto.", 7),  # empty pivot: dropped by the prefilter
]


@pytest.mark.pipeline
def test_a_bitext_pcollection_in_pairs_and_books_out(tiny_model_dir: Path) -> None:
    config = MiningSettings(model=str(tiny_model_dir), threshold="0.0")

    def candidates(pairs: list) -> None:
        sentences = {s for p in pairs for s in (p.sentence_a, p.sentence_b)}
        # Cover mode: every candidate of a multi-candidate group is in a pair.
        assert sentences == {
            "Dobranoc.",
            "Spokojnej nocy.",
            "Dobrej nocy.",
            "Dziękuję.",
            "Dzięki.",
        }
        assert {p.pivot for p in pairs} == {"Good night.", "Thank you."}

    def balanced(rows: list) -> None:
        counts = counts_from_rows(rows)
        assert accounting_errors(counts, MINE_STAGES) == []
        assert counts.stage("ReadBitext").taken_in == len(BITEXT)
        assert counts.stage("Prefilter").dropped == {"empty": 1}
        assert counts.stage("GroupByPivot").dropped == {"single_candidate": 1}

    with TestPipeline(runner="FnApiRunner") as pipeline:
        bitext = pipeline | "MyBitext" >> beam.Create(BITEXT)
        mined = bitext | "Mine" >> MineParaphrases(config)
        assert_that(mined.pairs, candidates, label="Pairs")
        assert_that(mined.rejects, equal_to([]), label="NoRejects")
        assert_that(mined.counts, balanced, label="Books")
        assert_that(
            mined.threshold | beam.Map(lambda t: (t["mode"], t["value"])),
            equal_to([("fixed", 0.0)]),
            label="Threshold",
        )


def _labels(config: MiningSettings, write_scored: bool = False) -> set[str]:
    pipeline = beam.Pipeline(runner="FnApiRunner")
    mine = MineParaphrases(config, write_scored=write_scored)
    _ = pipeline | beam.Create(BITEXT) | "Mine" >> mine
    proto = pipeline.to_runner_api()
    return {t.unique_name for t in proto.components.transforms.values()}


@pytest.mark.slow
def test_records_of_every_prefiltered_pair_only_where_write_scored_scores_them() -> None:
    as_pairs = "Mine/ReadAndPrefilter/Prefilter/AsPairs"
    # The rival search and the calibration sample read the entries: no
    # record of a pair that nothing keeps.
    default = _labels(MiningSettings(threshold="auto"))
    assert as_pairs not in default
    assert "Mine/MineGroups/CalibrationSample/Sample" in default
    assert as_pairs in _labels(MiningSettings(threshold="auto"), write_scored=True)
