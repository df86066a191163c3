"""ThresholdRecord: the manifest's ``threshold``, the cut and what it kept, for mine and refresh."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import apache_beam as beam
from paramine.pipelines.mining.mine_groups import MinedGroups
from paramine.pipelines.stages.cut.calibrate_threshold import SummarizeScores
from paramine.schemas.cut_record import CoherenceRecord, CutRecord, HardNegativeRecord


def _threshold_record(
    _: None,
    cut: CutRecord,
    aligned: dict[str, Any],
    coherence: CoherenceRecord | None,
    hard_negative: HardNegativeRecord | None,
) -> dict[str, Any]:
    """The manifest's ``threshold``: the cut, the kept scores, and the group checks' cuts."""
    summaries = {**cut.summaries, "aligned": aligned}
    whole = replace(cut, summaries=summaries, coherence=coherence, hard_negative=hard_negative)
    return whole.to_json()


def _optional_singleton(value: beam.PCollection | None) -> beam.pvalue.AsSingleton | None:
    """A side input of ``value``; ``None`` (a plain argument) where there is none."""
    return None if value is None else beam.pvalue.AsSingleton(value)


class ThresholdRecord(beam.PTransform):
    """The manifest's ``threshold``: the cut, the scores' summary, and the group checks' cuts.

    Applied to the pipeline; one dict out (``CutRecord.to_json``), as the manifest keeps it.
    """

    def __init__(self, groups: MinedGroups) -> None:
        super().__init__()
        self.groups = groups

    def expand(self, pbegin: beam.pvalue.PBegin) -> beam.PCollection:
        groups = self.groups
        true_scores = groups.cut_on | "SummarizeScores" >> SummarizeScores()
        # From a Create of its own: with the threshold as the main input the
        # FnApiRunner stalled ("watermark-pending bundles did not execute"),
        # presumably fusing this step into the stage its side inputs wait on.
        return (
            pbegin
            | "Once" >> beam.Create([None])
            | "Record"
            >> beam.Map(
                _threshold_record,
                beam.pvalue.AsSingleton(groups.threshold),
                beam.pvalue.AsSingleton(true_scores),
                _optional_singleton(groups.coherence),
                _optional_singleton(groups.hard_negative),
            )
        )
