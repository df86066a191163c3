"""The aligned pairs' own coder: what it keeps, and which PCollections use it."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
from apache_beam.coders import PickleCoder
from apache_beam.runners import pipeline_context
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.coders import AlignedPairCoder
from paramine.pipelines.formats import Shard
from paramine.pipelines.stages.prefilter import Prefilter, PrefilterOptions
from paramine.pipelines.stages.read_bitext import ReadBitext
from paramine.schemas.records import AlignedPair


def test_round_trip_keeps_every_field() -> None:
    pair = AlignedPair("Dokąd idziesz?", "Gdzie idziesz?", "en", "pl", "subs", "gs://b/x.tsv", 7)
    coder = AlignedPairCoder()
    encoded = coder.encode(pair)
    assert coder.decode(encoded) == pair
    # Field values and the line only: no class path or field names.
    assert len(encoded) < len(PickleCoder().encode(pair)) / 2


def _coder_of(pipeline: beam.Pipeline, pcoll: beam.PCollection) -> beam.coders.Coder:
    """The coder the runner gets for ``pcoll``: read back from the pipeline's proto."""
    proto, context = pipeline.to_runner_api(return_context=True)
    pcoll_id = context.pcollections.get_id(pcoll)
    coder_id = proto.components.pcollections[pcoll_id].coder_id
    return pipeline_context.PipelineContext(proto.components).coders.get_by_id(coder_id)


def test_the_read_and_the_prefilter_hand_on_pairs_with_their_coder(tmp_path: Path) -> None:
    tsv = tmp_path / "bitext.tsv"
    tsv.write_text("Where are you?\tGdzie jesteś?\nThank you.\tDziękuję.\n", encoding="utf-8")
    shard = Shard("tsv", str(tsv), "fixture", "en", "pl")
    pipeline = TestPipeline(runner="FnApiRunner")
    read = pipeline | ReadBitext([shard])
    prefiltered = (read.kept | Prefilter(PrefilterOptions())).kept
    assert_that(
        prefiltered | beam.Map(lambda p: (p.pivot, p.candidate, p.line)),
        equal_to([("Where are you?", "Gdzie jesteś?", 1), ("Thank you.", "Dziękuję.", 2)]),
    )
    # Without a type the pairs would be pickled (2.3 against 1.3 us a pair)
    # wherever the runner encodes them.
    for pcoll in (read.kept, prefiltered):
        coder = _coder_of(pipeline, pcoll)
        assert isinstance(coder, AlignedPairCoder), coder
    pipeline.run().wait_until_finish()
