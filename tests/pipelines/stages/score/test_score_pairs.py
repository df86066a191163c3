"""ScorePairs: cosines of encoded texts joined back on pairs, named parts in one pass."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.core.vectors import pair_texts
from paramine.pipelines.stages.score.encode_texts import EncodeTexts
from paramine.pipelines.stages.score.score_pairs import ScorePairs
from paramine.schemas.records import AlignedPair

pytestmark = pytest.mark.pipeline


class TestScorePairs:
    def test_in_a_pipeline(self, tiny_model_dir: Path) -> None:
        # A budget of 4 tokens: many small batches.
        handler = EncoderHandler(str(tiny_model_dir), token_budget=4)
        pairs = [AlignedPair(f"s{i}", f"s{i}", "en", "pl", "c", "s", i) for i in range(5)]
        with TestPipeline(runner="FnApiRunner") as p:
            aligned = p | beam.Create(pairs)
            vectors = aligned | beam.FlatMap(pair_texts) | EncodeTexts(handler)
            scores = (
                aligned | ScorePairs(vectors) | beam.Map(lambda s: (s.pair.line, round(s.score, 4)))
            )
            assert_that(scores, equal_to([(i, 1.0) for i in range(5)]))

    def test_named_parts_in_one_pass(self, tiny_model_dir: Path) -> None:
        # Three parts share texts ("a" is a pivot of two parts); each comes back
        # under its own name, with the score it gets alone, vectors where asked.
        handler = EncoderHandler(str(tiny_model_dir))
        parts = {
            "grouped": [AlignedPair("a", "b", "en", "pl", "c", "s", 1)],
            "rival": [AlignedPair("a", "c", "en", "pl", "c", "s", 2)],
            "sample": [AlignedPair("d", "b", "en", "pl", "c", "s", 3)],
        }
        with TestPipeline(runner="FnApiRunner") as p:
            pcolls = {name: p | f"Create[{name}]" >> beam.Create(ps) for name, ps in parts.items()}
            everything = list(pcolls.values()) | "Everything" >> beam.Flatten()
            vectors = everything | beam.FlatMap(pair_texts) | EncodeTexts(handler)
            alone = everything | "Alone" >> ScorePairs(vectors)
            together = pcolls | "Together" >> ScorePairs(vectors, keep_vectors={"rival"})
            by_part = [
                together[name]
                | f"Of[{name}]"
                >> beam.Map(
                    lambda s, n: (s.pair.line, (n, s.score, s.pivot_vector is not None)), name
                )
                for name in parts
            ]
            joined = (
                {
                    "alone": alone | beam.Map(lambda s: (s.pair.line, s.score)),
                    "together": by_part | "ByPart" >> beam.Flatten(),
                }
                | beam.CoGroupByKey()
                | beam.MapTuple(
                    lambda line, sides: (
                        line,
                        [
                            (n, score == sides["alone"][0], kept)
                            for n, score, kept in sides["together"]
                        ],
                    )
                )
            )
            assert_that(
                joined,
                equal_to(
                    [
                        (1, [("grouped", True, False)]),
                        (2, [("rival", True, True)]),
                        (3, [("sample", True, False)]),
                    ]
                ),
            )
