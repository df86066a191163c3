"""ThresholdFilter: keep the pairs whose score reaches the cut.

The score is the cross-lingual cosine (``ScorePairs``, pipelines/stages/score/score_pairs.py)
or, with ``--score margin``, the ratio margin (``MarginScore``,
pipelines/stages/cut/rules/margin.py); the cut is a fixed number or the calibrated one
(pipelines/stages/cut/calibrate_threshold.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.schemas.records import ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

THRESHOLD_FILTER = Stage(
    "ThresholdFilter",
    ALIGNED_PAIR,
    ("below_threshold",),
    "keep pairs whose score reaches the cut",
)


class _ThresholdFn(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper(THRESHOLD_FILTER)

    def process(self, scored: ScoredPair, threshold: float) -> Iterator:
        if scored.score >= threshold:
            yield scored
        else:
            yield self.drop("below_threshold")


class ThresholdFilter(beam.PTransform):
    """Keeps pairs whose score (cosine or margin) reaches the threshold.

    Args:
        threshold: A fixed cut, or a singleton PCollection holding one
            (computed in the same pipeline, such as a calibrated cut).
    """

    def __init__(self, threshold: float | beam.PCollection) -> None:
        super().__init__()
        self.threshold = threshold

    def expand(self, scored: beam.PCollection) -> StageResult:
        threshold = (
            beam.pvalue.AsSingleton(self.threshold)
            if isinstance(self.threshold, beam.PCollection)
            else self.threshold
        )
        results = scored | "Cut" >> beam.ParDo(_ThresholdFn(), threshold).with_outputs(
            DROPPED, main="kept"
        )
        return StageResult(results["kept"], results[DROPPED])
