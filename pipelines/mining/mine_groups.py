"""MineGroups: group aligned pairs by pivot, score them, cut, check and regroup, with books.

pairs | "GroupByPivot" | "EncodeTexts" / "ScorePairs" | "ContestCandidates"
      | ("MarginScore") | "ThresholdFilter" | "CoherenceFilter" | "RegroupByPivot" -> groups

Pairs are grouped before they are scored: only pivots with two or more
distinct candidates go on, and each distinct text of what goes on (plus the
rival pivots and the calibration sample) is encoded once in the whole run.
Each variant (margin or cosine, calibrated or fixed cut, with or without the
contest and the group checks) is decided once, from the settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import apache_beam as beam
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.core.accounting import CountNote, CountStage, StageResult
from paramine.pipelines.core.groups import group_weight
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.core.vectors import known_or_encode, pair_texts
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.cut.calibrate_threshold import (
    CalibrateThreshold,
    CalibrationSample,
    EmbedSample,
    sample_texts,
)
from paramine.pipelines.stages.cut.margin_score import MarginScore
from paramine.pipelines.stages.cut.rules.cuts import fixed_cut
from paramine.pipelines.stages.cut.rules.margin import MarginScoring
from paramine.pipelines.stages.cut.threshold_filter import THRESHOLD_FILTER, ThresholdFilter
from paramine.pipelines.stages.filter.coherence_filter import (
    COHERENCE_FILTER,
    CoherenceFilter,
    HardNegativeCut,
)
from paramine.pipelines.stages.group.contest_candidates import (
    CONTEST_CANDIDATES,
    ContestCandidates,
    RivalPairs,
)
from paramine.pipelines.stages.group.group_by_pivot import GROUP_BY_PIVOT, GroupByPivot
from paramine.pipelines.stages.group.regroup_by_pivot import REGROUP_BY_PIVOT, RegroupByPivot
from paramine.pipelines.stages.score.encode_texts import EncodeTexts
from paramine.pipelines.stages.score.score_pairs import SCORE_PAIRS, ScorePairs
from paramine.pipelines.thresholds.coherence import coherence_cut, support_floor
from paramine.schemas.run_counts import ENCODING
from paramine.schemas.stages import Stage


def default_encoder(settings: MiningSettings) -> EncoderHandler:
    """The encoder of a graph built without one: the settings' model, on this machine's device."""
    return EncoderHandler.of(settings.encoder_options)


class MinedGroups(NamedTuple):
    """Each stage's result of ``MineGroups``, and what it used.

    Attributes:
        grouped: GroupByPivot's books: the pairs of pivots with two or more candidates.
        vectors: ``(text, vector)`` of every text encoded.
        fresh: The pairs scored by the encoder in this run (grouped and rival).
        scored: ScorePairs' books: the grouped pairs, each with its cosine.
        contested: ContestCandidates' books (``rival_pivot``).
        cut_on: The pairs the cut is applied to (margin-rescored where margin is the score).
        kept: ThresholdFilter's books.
        coherent: CoherenceFilter's books.
        groups: RegroupByPivot's books: the ``Group`` records that make pairs.
        threshold: One dict: how the cut was chosen and its value.
        cut: The cut's value, a singleton.
        coherence: The coherence cut's record, or ``None`` where it does not run.
        hard_negative: The hard-negative cut's record, or ``None`` where it does not run.
        embedded: The embedded calibration sample, or ``None`` with a fixed threshold.
        counts: Count rows of every stage's books, and the texts encoded.
    """

    grouped: StageResult
    vectors: beam.PCollection
    fresh: list[beam.PCollection]
    scored: StageResult
    contested: StageResult
    cut_on: beam.PCollection
    kept: StageResult
    coherent: StageResult
    groups: StageResult
    threshold: beam.PCollection
    cut: beam.PCollection
    coherence: beam.PCollection | None
    hard_negative: beam.PCollection | None
    embedded: beam.PCollection | None
    counts: beam.PCollection


class _Scored(NamedTuple):
    """What the scoring step hands on: the books and the parts the cut needs."""

    vectors: beam.PCollection
    fresh: list[beam.PCollection]
    scored: StageResult
    contested: StageResult
    sample: beam.PCollection | None


class _Cut(NamedTuple):
    cut_on: beam.PCollection
    kept: StageResult
    coherent: StageResult
    threshold: beam.PCollection
    cut: beam.PCollection
    coherence: beam.PCollection | None
    hard_negative: beam.PCollection | None
    embedded: beam.PCollection | None


class MineGroups(beam.PTransform):
    """Group, encode, score, contest, cut, check the coherence of and regroup aligned pairs.

    Applied to the aligned pairs to mine; ``paramine mine`` (``MineParaphrases``)
    and ``paramine refresh`` (the affected pivots' pairs) both apply it.

    Args:
        settings: What decides the pairs.
        everything: The aligned pairs in which rival pivots and the
            calibration sample are found.
        encoder: The run's encoder (model, device, batches); by default the
            settings' model on this machine's device (``default_encoder``).
        origins: ``everything`` and the pairs come as the prefilter's entries
            written with these (``Prefiltered.entries``); ``None``: as
            records. The rival search and the calibration sample make records
            only of the pairs they keep.
        known: ``((pivot, candidate), cosine)`` of pairs scored before; those
            pairs keep their cosine and their texts are not encoded for them.
        extra_texts: More texts to encode in the same pass (``--write-scored``).
    """

    #: The stages whose books this keeps, in order.
    STAGES: tuple[Stage, ...] = (
        GROUP_BY_PIVOT,
        SCORE_PAIRS,
        CONTEST_CANDIDATES,
        THRESHOLD_FILTER,
        COHERENCE_FILTER,
        REGROUP_BY_PIVOT,
    )

    def __init__(
        self,
        settings: MiningSettings,
        everything: beam.PCollection,
        *,
        encoder: EncoderHandler | None = None,
        origins: Origins | None = None,
        known: beam.PCollection | None = None,
        extra_texts: Sequence[beam.PCollection] = (),
    ) -> None:
        super().__init__()
        self.settings = settings
        self.everything = everything
        self.encoder = encoder or default_encoder(settings)
        self.origins = origins
        self.known = known
        self.extra_texts = list(extra_texts)

    def expand(self, pairs: beam.PCollection) -> MinedGroups:
        settings = self.settings
        # Group before scoring: a pivot with one distinct candidate can never
        # make a pair, so its pairs are dropped here and never encoded.
        grouped = pairs | "GroupByPivot" >> GroupByPivot(settings.group_options, self.origins)
        scoring = self._score(grouped.kept)
        cutting = self._cut(scoring)
        groups = cutting.coherent.kept | "RegroupByPivot" >> RegroupByPivot(settings.group_options)
        counts = (
            grouped | "CountGroupByPivot" >> CountStage(GROUP_BY_PIVOT, taken_in=pairs),
            scoring.scored | "CountScorePairs" >> CountStage(SCORE_PAIRS, taken_in=grouped.kept),
            scoring.contested
            | "CountContestCandidates"
            >> CountStage(CONTEST_CANDIDATES, taken_in=scoring.scored.kept),
            cutting.kept
            | "CountThresholdFilter"
            >> CountStage(THRESHOLD_FILTER, taken_in=scoring.contested.kept),
            cutting.coherent
            | "CountCoherenceFilter" >> CountStage(COHERENCE_FILTER, taken_in=cutting.kept.kept),
            groups
            | "CountRegroupByPivot"
            >> CountStage(REGROUP_BY_PIVOT, taken_in=cutting.coherent.kept, weight=group_weight),
            scoring.vectors | "CountTexts" >> CountNote(ENCODING, "texts_encoded", "text"),
        ) | "Counts" >> beam.Flatten()
        return MinedGroups(
            grouped=grouped,
            vectors=scoring.vectors,
            fresh=scoring.fresh,
            scored=scoring.scored,
            contested=scoring.contested,
            cut_on=cutting.cut_on,
            kept=cutting.kept,
            coherent=cutting.coherent,
            groups=groups,
            threshold=cutting.threshold,
            cut=cutting.cut,
            coherence=cutting.coherence,
            hard_negative=cutting.hard_negative,
            embedded=cutting.embedded,
            counts=counts,
        )

    def _score(self, grouped: beam.PCollection) -> _Scored:
        """Encode every text once; score the grouped, rival and sample pairs; contest."""
        settings, everything, known = self.settings, self.everything, self.known
        pipeline = grouped.pipeline
        contest = settings.contest_options.on
        # Each distinct text of the run is encoded once: the grouped pairs'
        # texts, the rivals', the calibration sample's and the extra ones.
        to_encode, prescored = known_or_encode(grouped, known, "Group")
        texts = [to_encode | "GroupedTexts" >> beam.FlatMap(pair_texts), *self.extra_texts]
        rivals = rivals_prescored = None
        if contest:
            # The other pivots the input aligns a grouped candidate with: only
            # these pivots are new texts (their candidates are grouped ones).
            rivals = everything | "RivalPairs" >> RivalPairs(grouped, self.origins)
            rivals, rivals_prescored = known_or_encode(rivals, known, "Rival")
            texts.append(rivals | "RivalTexts" >> beam.FlatMap(pair_texts))
        sample = None
        if settings.cut_options.calibrated:
            sample = everything | "CalibrationSample" >> CalibrationSample(
                settings.calibration_options, self.origins
            )
            texts.append(sample | "SampleTexts" >> beam.FlatMap(sample_texts))
        vectors = (
            texts
            | "AllTextsToEncode" >> beam.Flatten()
            | "EncodeTexts" >> EncodeTexts(self.encoder)
        )

        # One pass of joins scores every part: the grouped pairs (the contest
        # compares candidates by their vectors too; margin rescores with
        # them), the rivals' and the calibration sample's.
        parts = {"grouped": to_encode}
        keep = {"grouped"} if settings.cut_options.margin or contest else set()
        if rivals is not None:
            parts["rival"] = rivals
            keep.add("rival")
        if sample is not None:
            parts["sample"] = sample | "SamplePairs" >> beam.FlatMap(lambda pairs: pairs)
            keep.add("sample")
        scored_parts = parts | "ScorePairs" >> ScorePairs(vectors, keep_vectors=keep)
        scored = scored_parts["grouped"]
        fresh = [scored]
        if prescored is not None:
            scored = (scored, prescored) | "WithStoredCosines" >> beam.Flatten()
        no_drops = pipeline | "ScorePairsDropsNothing" >> beam.Create([])
        if rivals is not None and contest:
            rival_scores = scored_parts["rival"]
            fresh.append(rival_scores)
            if rivals_prescored is not None:
                rival_scores = (
                    rival_scores,
                    rivals_prescored,
                ) | "RivalsWithStored" >> beam.Flatten()
            contested = scored | "ContestCandidates" >> ContestCandidates(
                rival_scores, settings.contest_options
            )
        else:
            contested = StageResult(scored, pipeline | "NoContest" >> beam.Create([]))
        return _Scored(
            vectors,
            fresh,
            StageResult(scored, no_drops),
            contested,
            scored_parts["sample"] if sample is not None else None,
        )

    def _cut(self, scoring: _Scored) -> _Cut:
        """Calibrate (or fix) the cut, apply it, and check the groups' coherence."""
        settings, checks = self.settings, self.settings.coherence_options
        pipeline = scoring.vectors.pipeline
        margin = settings.cut_options.margin
        scored = scoring.contested.kept
        if settings.contest_options.on and not margin:
            scored = scored | "DropVectors" >> beam.Map(lambda s: s.without_vectors())
        embedded = coherence = None
        if scoring.sample is not None:
            embedded = scoring.sample | "EmbedSample" >> EmbedSample()
            rescoring = None
            if margin:
                scored = scored | "MarginScore" >> MarginScore(settings.margin_options, embedded)
                rescoring = MarginScoring(settings.margin_options)
            threshold = embedded | "CalibrateThreshold" >> CalibrateThreshold(
                settings.calibration_options, scoring=rescoring, support=checks.group_support
            )
            if checks.min_group is not None:
                coherence = embedded | "CoherenceCut" >> beam.Map(
                    coherence_cut, checks.max_false_accept
                )
        else:
            threshold = pipeline | "FixedThreshold" >> beam.Create(
                [fixed_cut(settings.cut_options.fixed_threshold)]
            )
        cut = threshold | "CutValue" >> beam.Map(lambda record: record.value)
        # With group support the pairs go on down to its floor; CoherenceFilter
        # then keeps those below the cut only beside a close group-mate.
        support = scoring.sample is not None and checks.group_support is not None
        floor = threshold | "FloorValue" >> beam.Map(support_floor) if support else cut
        kept = scored | "ThresholdFilter" >> ThresholdFilter(floor)
        hard_negative = None
        if checks.hard_negative_accept is not None:
            hard_negative = kept.kept | "HardNegativeCut" >> HardNegativeCut(
                scoring.vectors, checks.hard_negative_accept
            )
        if coherence is not None or hard_negative is not None or support:
            coherent = kept.kept | "CoherenceFilter" >> CoherenceFilter(
                scoring.vectors,
                coherence,
                checks.min_group,
                hard_negative,
                threshold if support else None,
            )
        else:
            coherent = StageResult(kept.kept, pipeline | "NoCoherence" >> beam.Create([]))
        return _Cut(scored, kept, coherent, threshold, cut, coherence, hard_negative, embedded)
