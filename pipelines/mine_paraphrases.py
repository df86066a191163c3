"""MineParaphrases: the whole mining graph as one composite transform.

Shards or a bitext PCollection in; paraphrase pairs, rejects, the stages'
count rows and the threshold record out. ``paramine mine`` puts it between
nothing and ``WriteDataset``; a user can put it into a pipeline of their own::

    config = MineConfig(src_lang="en", tgt_lang="pl", model="e5-small")
    with beam.Pipeline() as p:
        bitext = p | beam.Create([AlignedPair("Yes.", "Tak.", "en", "pl", "c", "s", 1), ...])
        mined = bitext | "Mine" >> MineParaphrases(config)
        mined.pairs | beam.Map(print)

bitext | "ReadBitext" | "Prefilter" | "GroupByPivot" | "EncodeTexts" | "ScorePairs"
       | "ThresholdFilter" | "RegroupByPivot" | "MakePairs" | "PostFilter"

Pairs are grouped before they are scored: only pivots with two or more
distinct candidates go on, and each distinct text of what goes on (plus the
calibration sample) is encoded once in the whole run (pipelines/stages/encode_texts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import apache_beam as beam
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.core.accounting import (
    ENCODING,
    CountNote,
    CountStage,
    GatherCounts,
    StageResult,
)
from paramine.pipelines.core.cuts import coherence_cut, support_floor
from paramine.pipelines.core.groups import group_weight
from paramine.pipelines.core.junk import Limits
from paramine.pipelines.core.margin import MarginScoring
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.core.vectors import ScoreByText, known_or_encode, pair_texts
from paramine.pipelines.formats import ReaderOptions, Shard
from paramine.pipelines.run.config import MineConfig
from paramine.pipelines.stages.calibrate_threshold import (
    CalibrateThreshold,
    CalibrationSample,
    EmbedSample,
    SummarizeScores,
    sample_texts,
)
from paramine.pipelines.stages.coherence_filter import COHERENCE, CoherenceFilter, HardNegativeCut
from paramine.pipelines.stages.contest_candidates import CONTEST, ContestCandidates, RivalPairs
from paramine.pipelines.stages.encode_texts import EncodeTexts
from paramine.pipelines.stages.group_by_pivot import GROUP, GroupByPivot
from paramine.pipelines.stages.make_pairs import MakePairs
from paramine.pipelines.stages.postfilter import POSTFILTER, PostFilter
from paramine.pipelines.stages.prefilter import PREFILTER, Prefilter, PrefilterOptions
from paramine.pipelines.stages.read_bitext import READ, ReadBitext, ReadOutput
from paramine.pipelines.stages.regroup_by_pivot import REGROUP, RegroupByPivot
from paramine.pipelines.stages.score_pairs import MarginScore
from paramine.pipelines.stages.threshold_filter import THRESHOLD, ThresholdFilter
from paramine.schemas.stages import Stage

#: The stages of a mining run, in order: the manifest records this list and
#: the accounting identity is checked against it.
MINE_STAGES: tuple[Stage, ...] = (
    READ,
    PREFILTER,
    GROUP,
    CONTEST,
    THRESHOLD,
    COHERENCE,
    REGROUP,
    POSTFILTER,
)


class MinedParaphrases(NamedTuple):
    """What ``MineParaphrases`` yields.

    Attributes:
        pairs: ``ParaphrasePair`` records, the dataset's rows.
        rejects: ``Rejected`` records: input that could not be read.
        counts: ``(stage, key, n)`` rows of every stage's books
            (``accounting.counts_from_rows`` folds them).
        threshold: One dict: how the cut was chosen, its value, and score summaries.
        scored: With ``write_scored``: every prefiltered pair as
            ``(ScoredPair, passed)``; otherwise None.
    """

    pairs: beam.PCollection
    rejects: beam.PCollection
    counts: beam.PCollection
    threshold: beam.PCollection
    scored: beam.PCollection | None = None


def reader_options(config: MineConfig) -> ReaderOptions:
    """The readers' settings of a run."""
    return ReaderOptions(
        invalid_utf8=config.invalid_utf8,
        max_line_chars=config.max_line_chars,
        on_length_mismatch=config.on_length_mismatch,
        xces_links=config.xces_links,
        on_malformed_xml=config.on_malformed_xml,
        tsv_columns=config.tsv_columns,
        split_bytes=config.split_bytes,
        max_rejects_per_reason=config.max_rejects_per_reason,
        min_adequacy=config.min_adequacy,
        min_language_score=config.min_language_score,
        score_column=config.score_column,
        score_property=config.score_property,
        min_score=config.min_score,
    )


def prefilter_options(config: MineConfig) -> PrefilterOptions:
    """The prefilter's settings of a run."""
    filters = config.filters
    return PrefilterOptions(
        min_words=config.min_words,
        max_words=config.max_words,
        max_length_ratio=config.max_length_ratio,
        sentence_count_filter=config.sentence_count_filter,
        junk_rules=tuple(filters["junk_rules"]),
        limits=Limits(filters["min_letter_share"], filters["min_script_share"]),
        language_ratio=filters["language_check"],
    )


def encoder_handler(config: MineConfig) -> EncoderHandler:
    """The run's encoder: its model, device, prefix and the token budget of its batches."""
    return EncoderHandler(
        config.model,
        device=config.device,
        prefix=config.prefix,
        share_across_processes=config.share_model_across_processes,
        backend=config.backend,
        quantize=config.quantize,
        token_budget=config.batch_tokens,
    )


class MinedGroups(NamedTuple):
    """What ``ScoreGroups`` makes of the grouped pairs: each stage's result, and what it used.

    Attributes:
        vectors: ``(text, vector)`` of every text encoded.
        fresh: The pairs scored by the encoder in this run (grouped and rival).
        contested: The contest's books (``rival_pivot``).
        scored: The pairs the cut is applied to (margin-rescored where margin is the score).
        kept: The threshold's books.
        coherent: The coherence check's books.
        threshold: One dict: how the cut was chosen and its value.
        cut: The cut's value, a singleton.
        coherence: The coherence cut's record, or ``None`` where it does not run.
        hard_negative: The hard-negative cut's record, or ``None`` where it does not run.
        embedded: The embedded calibration sample, or ``None`` with a fixed threshold.
    """

    vectors: beam.PCollection
    fresh: list[beam.PCollection]
    contested: StageResult
    scored: beam.PCollection
    kept: StageResult
    coherent: StageResult
    threshold: beam.PCollection
    cut: beam.PCollection
    coherence: beam.PCollection | None
    hard_negative: beam.PCollection | None
    embedded: beam.PCollection | None


class ScoreGroups(beam.PTransform):
    """Encode, score, contest, cut and check the coherence of grouped pairs.

    The middle of the mining graph, between ``GroupByPivot`` and
    ``RegroupByPivot``; ``MineParaphrases`` and ``paramine refresh``
    (pipelines/refresh/job.py) both apply it. Each variant (margin or cosine,
    calibrated or fixed cut, with or without the contest and the group
    checks) is decided once, from the config.

    Args:
        config: The run's settings.
        everything: The aligned pairs in which rival pivots and the
            calibration sample are found.
        extra_texts: More texts to encode in the same pass (``--write-scored``).
        known: ``((pivot, candidate), cosine)`` of pairs scored before; those
            pairs keep their cosine and their texts are not encoded for them.
        origins: ``everything`` comes as the prefilter's entries written with
            these (``Prefiltered.entries``); ``None``: as records. The rival
            search and the calibration sample make records only of the
            pairs they keep.
    """

    def __init__(
        self,
        config: MineConfig,
        everything: beam.PCollection,
        extra_texts: Sequence[beam.PCollection] = (),
        known: beam.PCollection | None = None,
        origins: Origins | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.everything = everything
        self.extra_texts = list(extra_texts)
        self.known = known
        self.origins = origins

    def expand(self, grouped: beam.PCollection) -> MinedGroups:
        config, everything, known = self.config, self.everything, self.known
        pipeline = grouped.pipeline
        margin = config.margin
        contest = config.rival_margin is not None
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
        if config.calibrated:
            sample = everything | "CalibrationSample" >> CalibrationSample(
                config.calibration_sample, self.origins
            )
            texts.append(sample | "SampleTexts" >> beam.FlatMap(sample_texts))
        vectors = (
            texts
            | "AllTextsToEncode" >> beam.Flatten()
            | "EncodeTexts" >> EncodeTexts(encoder_handler(config))
        )

        # One pass of joins scores every part: the grouped pairs (the contest
        # compares candidates by their vectors too; margin rescores with
        # them), the rivals' and the calibration sample's.
        parts = {"grouped": to_encode}
        keep = {"grouped"} if margin or contest else set()
        if rivals is not None:
            parts["rival"] = rivals
            keep.add("rival")
        if sample is not None:
            parts["sample"] = sample | "SamplePairs" >> beam.FlatMap(lambda pairs: pairs)
            keep.add("sample")
        scored_parts = parts | "ScorePairs" >> ScoreByText(vectors, keep_vectors=keep)
        scored = scored_parts["grouped"]
        fresh = [scored]
        if prescored is not None:
            scored = (scored, prescored) | "WithStoredCosines" >> beam.Flatten()
        if rivals is not None and config.rival_margin is not None:
            rival_scores = scored_parts["rival"]
            fresh.append(rival_scores)
            if rivals_prescored is not None:
                rival_scores = (
                    rival_scores,
                    rivals_prescored,
                ) | "RivalsWithStored" >> beam.Flatten()
            contested = scored | "ContestCandidates" >> ContestCandidates(
                rival_scores, config.rival_margin
            )
        else:
            contested = StageResult(scored, pipeline | "NoContest" >> beam.Create([]))
        scored = contested.kept
        if contest and not margin:
            scored = scored | "DropVectors" >> beam.Map(lambda s: s.without_vectors())

        embedded = coherence = None
        if sample is not None:
            embedded = scored_parts["sample"] | "EmbedSample" >> EmbedSample()
            scoring = None
            if margin:
                scored = scored | "MarginScore" >> MarginScore(config.margin_k, embedded)
                scoring = MarginScoring(config.margin_k)
            threshold = embedded | "CalibrateThreshold" >> CalibrateThreshold(
                config.max_false_accept, scoring=scoring, support=config.group_support
            )
            if config.coherence_min_group is not None:
                coherence = embedded | "CoherenceCut" >> beam.Map(
                    coherence_cut, config.max_false_accept
                )
        else:
            threshold = pipeline | "FixedThreshold" >> beam.Create(
                [{"mode": "fixed", "value": config.fixed_threshold, "score": "cosine"}]
            )
        cut = threshold | "CutValue" >> beam.Map(lambda info: info["value"])
        # With group support the pairs go on down to its floor; CoherenceFilter
        # then keeps those below the cut only beside a close group-mate.
        support = sample is not None and config.group_support is not None
        floor = threshold | "FloorValue" >> beam.Map(support_floor) if support else cut
        kept = scored | "ThresholdFilter" >> ThresholdFilter(floor)
        hard_negative = None
        if config.hard_negative_accept is not None:
            hard_negative = kept.kept | "HardNegativeCut" >> HardNegativeCut(
                vectors, config.hard_negative_accept
            )
        if coherence is not None or hard_negative is not None or support:
            coherent = kept.kept | "CoherenceFilter" >> CoherenceFilter(
                vectors,
                coherence,
                config.coherence_min_group,
                hard_negative,
                threshold if support else None,
            )
        else:
            coherent = StageResult(kept.kept, pipeline | "NoCoherence" >> beam.Create([]))
        return MinedGroups(
            vectors,
            fresh,
            contested,
            scored,
            kept,
            coherent,
            threshold,
            cut,
            coherence,
            hard_negative,
            embedded,
        )


def count_mined_groups(
    grouped: StageResult, core: MinedGroups, groups: StageResult
) -> tuple[beam.PCollection, ...]:
    """The count rows of ``ScoreGroups``' stages and of the regrouping after it."""
    return (
        core.contested | "CountContest" >> CountStage(CONTEST, taken_in=grouped.kept),
        core.kept | "CountThreshold" >> CountStage(THRESHOLD, taken_in=core.contested.kept),
        core.coherent | "CountCoherence" >> CountStage(COHERENCE, taken_in=core.kept.kept),
        groups
        | "CountRegroup" >> CountStage(REGROUP, taken_in=core.coherent.kept, weight=group_weight),
    )


def _threshold_record(
    _: None,
    info: dict[str, Any],
    aligned: dict[str, Any],
    coherence: dict[str, Any] | None,
    hard_negative: dict[str, Any] | None,
) -> dict[str, Any]:
    """The manifest's ``threshold``: the cut, the kept scores, and the group checks' cuts."""
    record = {**info, "aligned": aligned}
    if coherence is not None:
        record["coherence"] = coherence
    if hard_negative is not None:
        record["hard_negative"] = hard_negative
    return record


def _optional_singleton(value: beam.PCollection | None) -> beam.pvalue.AsSingleton | None:
    """A side input of ``value``; ``None`` (a plain argument) where there is none."""
    return None if value is None else beam.pvalue.AsSingleton(value)


class ThresholdRecord(beam.PTransform):
    """The manifest's ``threshold``: the cut, the kept scores' summary, and the group checks' cuts.

    Applied to the pipeline; one dict out. Both ``paramine mine`` and
    ``paramine refresh`` record it.
    """

    def __init__(self, core: MinedGroups) -> None:
        super().__init__()
        self.core = core

    def expand(self, pbegin: beam.pvalue.PBegin) -> beam.PCollection:
        core = self.core
        true_scores = core.scored | "SummarizeScores" >> SummarizeScores()
        # From a Create of its own: with the threshold as the main input the
        # FnApiRunner stalled ("watermark-pending bundles did not execute"),
        # presumably fusing this step into the stage its side inputs wait on.
        return (
            pbegin
            | "Once" >> beam.Create([None])
            | "Record"
            >> beam.Map(
                _threshold_record,
                beam.pvalue.AsSingleton(core.threshold),
                beam.pvalue.AsSingleton(true_scores),
                _optional_singleton(core.coherence),
                _optional_singleton(core.hard_negative),
            )
        )


class _AsRead(beam.PTransform):
    """A bitext PCollection given by the user, as if read: nothing rejected or repaired."""

    def expand(self, bitext: beam.PCollection) -> ReadOutput:
        pipeline = bitext.pipeline
        return ReadOutput(
            kept=bitext,
            dropped=pipeline | "NoDrops" >> beam.Create([]),
            rejected=pipeline | "NoRejects" >> beam.Create([]),
            repairs=pipeline | "NoRepairs" >> beam.Create([]),
        )


class MineParaphrases(beam.PTransform):
    """Mines paraphrase pairs: shards (applied to a pipeline) or a bitext PCollection in.

    Args:
        config: The run's settings; inputs and output are not used here.
        shards: The shards to read when applied to a pipeline (``PBegin``);
            leave out when applied to a PCollection of ``AlignedPair``.
        excluded: Normalized evaluation sentences that no pair may hold
            (run/eval_exclusion.py); PostFilter drops such pairs.
    """

    def __init__(
        self,
        config: MineConfig,
        shards: Sequence[Shard] = (),
        excluded: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.config = config
        self.shards = list(shards)
        self.excluded = excluded

    def expand(self, source: beam.pvalue.PBegin | beam.PCollection) -> MinedParaphrases:
        config = self.config
        if isinstance(source, beam.pvalue.PBegin):
            read = source | "ReadBitext" >> ReadBitext(self.shards, reader_options(config))
        else:
            read = source | "Bitext" >> _AsRead()
        # Records of every prefiltered pair only where --write-scored scores
        # them all: the stages that read every prefiltered pair read the
        # compact entries and make records of the pairs they keep.
        prefilter = Prefilter(prefilter_options(config), self.shards, config.write_scored)
        prefiltered = read.kept | "Prefilter" >> prefilter
        entries = prefiltered.entries
        # Group before scoring: a pivot with one distinct candidate can never
        # make a pair, so its pairs are dropped here and never encoded.
        grouped = entries | "GroupByPivot" >> GroupByPivot(config.max_group_size, prefilter.origins)
        extra = []
        if prefiltered.kept is not None:
            extra.append(prefiltered.kept | "AllTexts" >> beam.FlatMap(pair_texts))
        core = grouped.kept | "ScoreGroups" >> ScoreGroups(
            config, entries, extra, origins=prefilter.origins
        )
        groups = core.coherent.kept | "RegroupByPivot" >> RegroupByPivot(config.max_group_size)
        pairs = groups.kept | "MakePairs" >> MakePairs(
            config.pair_mode,
            config.max_pairs_per_group,
            config.near_equal,
            config.drop_inflection_pairs,
        )
        final = pairs | "PostFilter" >> PostFilter(
            config.near_equal, config.drop_inflection_pairs, config.near_duplicates, self.excluded
        )

        counts = (
            StageResult(read.kept, read.dropped) | "CountRead" >> CountStage(READ),
            StageResult(entries, prefiltered.dropped)
            | "CountPrefilter" >> CountStage(PREFILTER, taken_in=read.kept),
            grouped | "CountGroup" >> CountStage(GROUP, taken_in=entries),
            *count_mined_groups(grouped, core, groups),
            final | "CountPostFilter" >> CountStage(POSTFILTER, taken_in=pairs),
            read.repairs,
            core.vectors | "CountTexts" >> CountNote(ENCODING, "texts_encoded", "text"),
        ) | "AllCounts" >> GatherCounts(MINE_STAGES, [(ENCODING, "texts_encoded")])
        threshold = source.pipeline | "ThresholdRecord" >> ThresholdRecord(core)
        scored_all = None
        if prefiltered.kept is not None:
            scored_all = prefiltered.kept | "ScoreAll" >> _ScoreAll(config, core)
        return MinedParaphrases(final.kept, read.rejected, counts, threshold, scored_all)


class _ScoreAll(beam.PTransform):
    """``--write-scored``: every prefiltered pair scored as the cut sees it; did it pass."""

    def __init__(self, config: MineConfig, core: MinedGroups) -> None:
        super().__init__()
        self.config = config
        self.core = core

    def expand(self, prefiltered: beam.PCollection) -> beam.PCollection:
        config, core = self.config, self.core
        scored = prefiltered | "Score" >> ScoreByText(core.vectors, keep_vectors=config.margin)
        if config.margin and core.embedded is not None:
            scored = scored | "MarginScore" >> MarginScore(config.margin_k, core.embedded)
        return scored | "MarkPassed" >> beam.Map(
            lambda s, value: (s, s.score >= value), beam.pvalue.AsSingleton(core.cut)
        )
