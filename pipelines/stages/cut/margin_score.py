"""MarginScore: each pair's cosine replaced with its ratio margin against the calibration sample."""

from __future__ import annotations

import apache_beam as beam
from paramine.pipelines.stages.cut.rules.margin import (
    MarginBackground,
    MarginOptions,
    build_background,
    margin_of,
)
from paramine.schemas.records import ScoredPair


class MarginScore(beam.PTransform):
    """Replaces each pair's cosine with its ratio margin against the calibration sample.

    Applied to ``ScorePairs``' output scored with ``keep_vectors=True``; drops
    the vectors as it rescores, in the same fused step, so no pair keeps its
    embeddings past it.

    Args:
        options: The margin's k, neighbours averaged per side.
        sample: The embedded calibration sample (``EmbedSample``), a
            singleton PCollection: the background.
    """

    def __init__(self, options: MarginOptions, sample: beam.PCollection) -> None:
        super().__init__()
        self.k = options.k
        self.sample = sample

    def expand(self, scored: beam.PCollection) -> beam.PCollection:
        k = self.k

        def rescore(pair: ScoredPair, background: MarginBackground | None) -> ScoredPair:
            if background is None:  # no pairs at all, so none to rescore either
                return pair.without_vectors()
            return ScoredPair(pair.pair, margin_of(background, pair, k))

        background = self.sample | "Background" >> beam.Map(
            lambda sample: build_background(sample) if sample else None
        )
        return scored | "Rescore" >> beam.Map(rescore, beam.pvalue.AsSingleton(background))
