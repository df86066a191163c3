"""MineParaphrases: the whole mining graph as one composite transform.

Shards or a bitext PCollection in; paraphrase pairs, rejects, the stages'
count rows and the threshold record out. ``paramine mine`` runs it with
``WriteDataset`` inside ``MineDataset`` (mining/mine_dataset.py); a user can
put it into a pipeline of their own::

    settings = MiningSettings(src_lang="en", tgt_lang="pl", model="e5-small")
    with beam.Pipeline() as p:
        bitext = p | beam.Create([AlignedPair("Yes.", "Tak.", "en", "pl", "c", "s", 1), ...])
        mined = bitext | "Mine" >> MineParaphrases(settings)
        mined.pairs | beam.Map(print)

shards | "ReadAndPrefilter" (ReadBitext, Prefilter)
       | "MineGroups" (GroupByPivot, EncodeTexts, ScorePairs, ContestCandidates,
                       ThresholdFilter, CoherenceFilter, RegroupByPivot)
       | "PairGroups" (MakePairs, PostFilter)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import apache_beam as beam
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.core.accounting import GatherCounts
from paramine.pipelines.core.vectors import pair_texts
from paramine.pipelines.formats import Shard
from paramine.pipelines.formats.base import DEFAULT_SPLIT_BYTES
from paramine.pipelines.mining.mine_groups import MinedGroups, MineGroups
from paramine.pipelines.mining.pair_groups import PairGroups
from paramine.pipelines.mining.read_and_prefilter import ReadAndPrefilter
from paramine.pipelines.mining.threshold_record import ThresholdRecord
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.cut.margin_score import MarginScore
from paramine.pipelines.stages.score.score_pairs import ScorePairs
from paramine.schemas.run_counts import ENCODING
from paramine.schemas.stages import Stage

#: The stages of a mining run, in order: the manifest records this list and
#: the accounting identity is checked against it.
MINE_STAGES: tuple[Stage, ...] = (
    *ReadAndPrefilter.STAGES,
    *MineGroups.STAGES,
    *PairGroups.STAGES,
)
#: The figures counted beside the stages' books.
MINE_FIGURES = ((ENCODING, "texts_encoded"),)


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
        sides: One dict: what the prefilter decided about each side's lines,
            and what each per-line check dropped
            (``stages.filter.rules.line_check_record.run_record``).
    """

    pairs: beam.PCollection
    rejects: beam.PCollection
    counts: beam.PCollection
    threshold: beam.PCollection
    scored: beam.PCollection | None = None
    sides: beam.PCollection | None = None


class MineParaphrases(beam.PTransform):
    """Mines paraphrase pairs: shards (applied to a pipeline) or a bitext PCollection in.

    Args:
        settings: What decides the pairs.
        shards: The shards to read when applied to a pipeline (``PBegin``);
            leave out when applied to a PCollection of ``AlignedPair``.
        encoder: The run's encoder (its device and batches are the run's);
            by default the settings' model on this machine's device.
        split_bytes: Read uncompressed text files in spans of about this many bytes.
        write_scored: Also score every prefiltered pair (``MinedParaphrases.scored``).
        excluded: Normalized evaluation sentences that no pair may hold
            (run/eval_exclusion.py); PostFilter drops such pairs.
    """

    def __init__(
        self,
        settings: MiningSettings,
        shards: Sequence[Shard] = (),
        *,
        encoder: EncoderHandler | None = None,
        split_bytes: int = DEFAULT_SPLIT_BYTES,
        write_scored: bool = False,
        excluded: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.settings = settings
        self.shards = list(shards)
        self.encoder = encoder
        self.split_bytes = split_bytes
        self.write_scored = write_scored
        self.excluded = excluded

    def expand(self, source: beam.pvalue.PBegin | beam.PCollection) -> MinedParaphrases:
        settings = self.settings
        # Records of every prefiltered pair only where --write-scored scores
        # them all: the stages that read every prefiltered pair read the
        # compact entries and make records of the pairs they keep.
        clean = source | "ReadAndPrefilter" >> ReadAndPrefilter(
            settings, self.shards, split_bytes=self.split_bytes, records=self.write_scored
        )
        entries, every_pair = clean.prefiltered.entries, clean.prefiltered.kept
        extra = []
        if every_pair is not None:
            extra.append(every_pair | "AllTexts" >> beam.FlatMap(pair_texts))
        groups = entries | "MineGroups" >> MineGroups(
            settings, entries, encoder=self.encoder, origins=clean.origins, extra_texts=extra
        )
        paired = groups.groups.kept | "PairGroups" >> PairGroups(settings, self.excluded)
        counts = (clean.counts, groups.counts, paired.counts) | "AllCounts" >> GatherCounts(
            MINE_STAGES, MINE_FIGURES
        )
        threshold = source.pipeline | "ThresholdRecord" >> ThresholdRecord(groups)
        scored = None
        if every_pair is not None:
            scored = every_pair | "ScoreAll" >> _ScoreAll(settings, groups)
        return MinedParaphrases(
            paired.filtered.kept,
            clean.read.rejected,
            counts,
            threshold,
            scored,
            clean.prefiltered.sides,
        )


class _ScoreAll(beam.PTransform):
    """``--write-scored``: every prefiltered pair scored as the cut sees it; did it pass."""

    def __init__(self, settings: MiningSettings, groups: MinedGroups) -> None:
        super().__init__()
        self.settings = settings
        self.groups = groups

    def expand(self, prefiltered: beam.PCollection) -> beam.PCollection:
        settings, groups = self.settings, self.groups
        margin = settings.cut_options.margin
        scored = prefiltered | "Score" >> ScorePairs(groups.vectors, keep_vectors=margin)
        if margin and groups.embedded is not None:
            scored = scored | "MarginScore" >> MarginScore(settings.margin_options, groups.embedded)
        return scored | "MarkPassed" >> beam.Map(
            lambda s, value: (s, s.score >= value), beam.pvalue.AsSingleton(groups.cut)
        )
