"""ScorePairs and ThresholdFilter: cross-lingual cosine, then a cut."""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from apache_beam.ml.inference.base import RunInference

from encoders.handler import PairEncoderHandler
from pipelines.accounting import DROPPED, Dropper, StageResult
from schemas.records import ScoredPair


class ScorePairs(beam.PTransform):
    """Scores each aligned pair with the encoder through RunInference."""

    def __init__(self, handler: PairEncoderHandler) -> None:
        super().__init__()
        self.handler = handler

    def expand(self, pairs: beam.PCollection) -> beam.PCollection:
        return pairs | "RunInference" >> RunInference(self.handler)


class _ThresholdFn(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper("threshold")

    def process(self, scored: ScoredPair, threshold: float) -> Iterator:
        if scored.score >= threshold:
            yield scored
        else:
            yield self.drop("below_threshold")


class ThresholdFilter(beam.PTransform):
    """Keeps pairs whose cosine reaches the threshold.

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
