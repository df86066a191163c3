"""paramine's coders: what they keep, and which PCollections use them."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.coders import PickleCoder
from apache_beam.runners import pipeline_context
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.coders import (
    AlignedPairCoder,
    RecordsCoder,
    UntypedCoder,
    register_coders,
)
from paramine.pipelines.formats import Shard
from paramine.pipelines.stages.filter.prefilter import Prefilter
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.pipelines.stages.read.read_bitext import ReadBitext
from paramine.schemas.records import AlignedPair, ScoredPair


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


@pytest.mark.pipeline
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


# ------------------------------------------------- values of no declared type


def test_records_and_arrays_round_trip_smaller_than_pickled() -> None:
    coder = RecordsCoder()
    pair = AlignedPair("Dokąd idziesz?", "Gdzie idziesz?", "en", "pl", "subs", "gs://b/x.tsv", 7)
    vector = np.linspace(-1, 1, 384, dtype=np.float32)
    scored = ScoredPair(pair, 0.8125, vector, vector[::-1].copy())
    for value in (pair, scored, ScoredPair(pair, 0.5), vector):
        encoded = coder.encode(value)
        assert len(encoded) < len(PickleCoder().encode(value)), type(value)
        decoded = coder.decode(encoded)
        assert decoded == value if not isinstance(value, np.ndarray) else True
    back = coder.decode(coder.encode(scored))
    assert back.score == scored.score
    np.testing.assert_array_equal(back.pivot_vector, scored.pivot_vector)
    np.testing.assert_array_equal(back.candidate_vector, scored.candidate_vector)
    assert ScoredPair(pair, 0.5) == coder.decode(coder.encode(ScoredPair(pair, 0.5)))
    assert coder.decode(coder.encode(ScoredPair(pair, 0.5))).pivot_vector is None


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.arange(5, dtype=">f8"),  # byte order kept
        np.array(3.5, dtype=np.float16),  # no dimensions
        np.zeros((0, 8), dtype=np.int64),
        np.array([True, False]),
        np.arange(6, dtype=np.float32).reshape(2, 3).T,  # not contiguous
    ],
)
def test_an_array_comes_back_with_its_dtype_shape_and_values_writable(array: np.ndarray) -> None:
    coder = RecordsCoder()
    back = coder.decode(coder.encode(array))
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    back[...] = 0  # as an unpickled array is


def test_anything_else_is_pickled_as_it_was() -> None:
    coder = RecordsCoder()
    text_array = np.array(["a", "bc"])  # not a numeric kind
    masked = np.ma.masked_array([1.0, 2.0], mask=[False, True])  # not a plain array
    for value in ({"a": 1}, np.float32(0.25), Shard("tsv", "x.tsv", "c", "en", "pl")):
        assert coder.decode(coder.encode(value)) == value
    assert coder.decode(coder.encode(text_array)).tolist() == ["a", "bc"]
    back = coder.decode(coder.encode(masked))
    assert type(back) is np.ma.MaskedArray and back.mask.tolist() == [False, True]
    scored = coder.decode(coder.encode(ScoredPair(AlignedPair(*"abcdef", 1), 0.1, masked)))
    assert type(scored.pivot_vector) is np.ma.MaskedArray
    with pytest.raises(ValueError, match="first byte"):
        coder.decode(b"xyz")


@pytest.mark.pipeline
def test_a_join_of_texts_and_vectors_uses_the_records_coder_and_keeps_the_vectors() -> None:
    register_coders()
    pipeline = TestPipeline(runner="FnApiRunner")
    vectors = pipeline | "Vectors" >> beam.Create(
        [("Tak.", np.array([1.0, 0.0], dtype=np.float32)), ("Nie.", np.array([0.0, 1.0]))]
    )
    pairs = pipeline | "Pairs" >> beam.Create(
        [("Tak.", ScoredPair(AlignedPair("Yes.", "Tak.", "en", "pl", "c", "s", 1), 0.9))]
    )
    joined = (
        {"vector": vectors, "pair": pairs}
        | beam.CoGroupByKey()
        | beam.MapTuple(
            lambda text, parts: (
                text,
                [p.pair.line for p in parts["pair"]],
                [(v.dtype.str, v.tolist()) for v in parts["vector"]],
            )
        )
    )
    assert_that(
        joined,
        equal_to([("Tak.", [1], [("<f4", [1.0, 0.0])]), ("Nie.", [], [("<f8", [0.0, 1.0])])]),
    )
    # What the runner gets for the vectors: Create knows they are keyed by text, no more.
    coder = _coder_of(pipeline, vectors)
    assert isinstance(coder.coders()[1], UntypedCoder), coder
    pipeline.run().wait_until_finish()
