"""RefreshParaphrases: the Beam job of one ``paramine refresh`` commit.

new shards | ReadAndPrefilter ---------------------------------------.
state table | RetractRows (rows of changed or removed shards leave) -+-> AffectedPivots
                                                                     |
  the pivots whose pairs can change: those with a new or retracted   |
  row, and those that share a candidate with one (its rival pivots)  |
                                                                     v
  MineGroups (stored cosines stand) | PairGroups (cover keeps the old pairs still whole)
  | NotInTable                                                       |
                                                                     |
  every bucket that holds an affected pivot is written again, whole: v
  its unchanged rows as they were, the affected ones as mined now --> bucket files

The mining is the composites of ``paramine mine`` (pipelines/mining/),
applied to the affected pivots of the union of the old and the new input, so
that, with a fixed threshold, the table holds what one run over all the
input would write; the refresh adds only its own steps (the state, the
retraction, the old pairs, the table's files). A row that was scored once
keeps its cosine in the state and is not encoded again, unless the run needs
vectors (margin scoring and group coherence, with ``--threshold auto``).
Workers write the bucket files into the tables' folders, where nothing reads
them until the launcher commits them (pipelines/refresh/update.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import apache_beam as beam
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.core.accounting import CountNote, CountStage, GatherCounts
from paramine.pipelines.core.groups import group_key
from paramine.pipelines.core.rejects import WriteRejects
from paramine.pipelines.formats import Shard
from paramine.pipelines.mining.mine_groups import MineGroups
from paramine.pipelines.mining.pair_groups import PairGroups
from paramine.pipelines.mining.read_and_prefilter import ReadAndPrefilter
from paramine.pipelines.mining.threshold_record import ThresholdRecord
from paramine.pipelines.refresh.affected_pivots import AFFECTED_PIVOTS, Affected, AffectedPivots
from paramine.pipelines.refresh.not_in_table import NOT_IN_TABLE, NotInTable
from paramine.pipelines.refresh.retract_rows import RETRACT_ROWS, RetractRows
from paramine.pipelines.refresh.state_files import (
    StateRow,
    WriteBuckets,
    pair_record,
    read_pair_file,
    read_state_file,
    state_row,
)
from paramine.pipelines.refresh.write_summary import WriteSummary
from paramine.pipelines.settings.mining import MiningSettings
from paramine.schemas.run_counts import ENCODING, TABLE
from paramine.schemas.stages import Stage
from paramine.schemas.table import (
    BUCKET,
    PAIRS_TABLE_SCHEMA,
    STATE_SCHEMA,
    TableFile,
    bucket_of,
)

#: The stages of a refresh commit, in order (the manifest records them):
#: those of ``paramine mine``, with the state's and the affected pivots'
#: books before the grouping, and the table's own check after the pairing.
REFRESH_STAGES: tuple[Stage, ...] = (
    *ReadAndPrefilter.STAGES,
    RETRACT_ROWS,
    AFFECTED_PIVOTS,
    *MineGroups.STAGES,
    *PairGroups.STAGES,
    NOT_IN_TABLE,
)

#: The refresh's figures of its table rewrite (``counts["table"]``).
OLD_KEPT = "old_pairs_kept"
OLD_REPLACED = "old_pairs_replaced"
STATE_ROWS = "state_rows_written"
PAIR_ROWS = "pair_rows_written"
TABLE_KEYS = (OLD_KEPT, OLD_REPLACED, STATE_ROWS, PAIR_ROWS)
REFRESH_FIGURES = ((ENCODING, "texts_encoded"), *((TABLE, key) for key in TABLE_KEYS))


@dataclass(frozen=True)
class RefreshJob:
    """What one refresh mines, reads and writes; the launcher plans it.

    Attributes:
        root: The pairs table's root URL.
        run_id: Names this run's files (``part-<run_id>-<bucket>.parquet``).
        buckets: Buckets of both tables.
        shards: Shards new or changed since the last commit.
        retracted: ``AlignedPair.shard`` of every shard whose rows leave the
            state (changed or removed).
        state_files: The state table's files.
        pair_files: The pairs table's files.
        state_dir: Where the new state files go (the state table's root).
        rejects_dir: Where this run's rejects go.
        summary_url: Where the job writes its counts and threshold for the launcher.
        earlier_figures: The ``line_checks`` figures of the lines the table's
            earlier commits read: the sides are decided on them and the new
            shards' lines together (``Plan.earlier_figures``).
    """

    root: str
    run_id: str
    buckets: int
    shards: tuple[Shard, ...]
    retracted: frozenset[str]
    state_files: tuple[TableFile, ...]
    pair_files: tuple[TableFile, ...]
    state_dir: str
    rejects_dir: str
    summary_url: str
    earlier_figures: tuple[tuple[str, int], ...] = ()


def _updated_row(joined: tuple[tuple[str, str], dict[str, list]]) -> Iterator[StateRow]:
    _, sides = joined
    fresh = sides["cosine"]
    for row in sides["rows"]:
        yield StateRow(row.pair, float(fresh[0])) if fresh else row


def _carry_or_revisit(joined: tuple[Any, dict[str, list]]) -> Iterator:
    """Old pairs of one pivot: carried as they are, or handed to the pivot's new group."""
    key, sides = joined
    if sides["affected"]:
        yield beam.pvalue.TaggedOutput("revisit", (key, sides["pairs"]))
    else:
        yield from sides["pairs"]


def _in_touched(row: dict[str, Any], touched: list[int]) -> bool:
    return row[BUCKET] in touched


def needs_vectors(settings: MiningSettings) -> bool:
    """Whether a refresh must encode every candidate of a changed group again.

    Margin rescoring, the contest's relative rule and the group checks need
    the vectors of every candidate of a changed group; otherwise a stored
    cosine stands.
    """
    cut = settings.cut_options
    return (
        cut.margin
        or settings.contest_options.on
        or settings.coherence_options.needs_vectors(cut.calibrated)
    )


class StoredCosines(beam.PTransform):
    """``((pivot, candidate), cosine)`` of the state rows scored before, once per pair of texts."""

    def expand(self, rows: beam.PCollection) -> beam.PCollection:
        return (
            rows
            | "Scored"
            >> beam.FlatMap(
                lambda r: [] if r.cosine is None else [((r.pair.pivot, r.pair.candidate), r.cosine)]
            )
            # The same two texts have the same cosine in every row.
            | "OnePerTexts" >> beam.CombinePerKey(min)
        )


class _OldPairs(NamedTuple):
    """The table's old pairs: carried as they are, or handed to their pivot's new group."""

    carried: beam.PCollection
    revisit: beam.PCollection


class RefreshedParaphrases(NamedTuple):
    """What ``RefreshParaphrases`` writes: file URLs per table, and the summary it wrote."""

    state_files: beam.PCollection
    pair_files: beam.PCollection
    summary: beam.PCollection


class RefreshParaphrases(beam.PTransform):
    """The refresh's mining graph and its writes (module docstring).

    Args:
        settings: The mining settings (the same as ``paramine mine``'s).
        job: What to read and write.
        encoder: The run's encoder (its device and batches are the run's).
        split_bytes: Read uncompressed text files in spans of about this many bytes.
    """

    def __init__(
        self,
        settings: MiningSettings,
        job: RefreshJob,
        encoder: EncoderHandler | None = None,
        split_bytes: int | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.job = job
        self.encoder = encoder
        self.split_bytes = split_bytes

    def expand(self, pbegin: beam.pvalue.PBegin) -> RefreshedParaphrases:
        settings, job = self.settings, self.job
        p = pbegin.pipeline

        # New input (perhaps none), read and prefiltered as by `paramine mine`.
        reading = {} if self.split_bytes is None else {"split_bytes": self.split_bytes}
        clean = pbegin | "ReadAndPrefilter" >> ReadAndPrefilter(
            settings, job.shards, records=True, earlier=dict(job.earlier_figures), **reading
        )
        new = clean.prefiltered.kept

        # The state, less what is retracted, and the new pairs beside it.
        old_rows = (
            p
            | "StateFiles" >> beam.Create(list(job.state_files))
            | "SpreadStateFiles" >> beam.Reshuffle()
            | "ReadState" >> beam.FlatMap(read_state_file)
        )
        state = old_rows | "RetractRows" >> RetractRows(job.retracted)
        rows = (
            state.books.kept,
            new | "AsStateRows" >> beam.Map(StateRow),
        ) | "CurrentRows" >> beam.Flatten()
        affected = new | "AffectedPivots" >> AffectedPivots(rows, state.retracted)
        current = rows | "CurrentPairs" >> beam.Map(lambda r: r.pair)

        # Mining, as in MineParaphrases, on the affected pivots.
        known = None if needs_vectors(settings) else rows | "StoredCosines" >> StoredCosines()
        groups = (
            affected.books.kept
            | "AffectedPairs" >> beam.Map(lambda r: r.pair)
            | "MineGroups" >> MineGroups(settings, current, encoder=self.encoder, known=known)
        )
        old = self._old_pairs(p, affected.keys)
        paired = groups.groups.kept | "PairGroups" >> PairGroups(settings, previous=old.revisit)
        staying = (old.carried, paired.made.kept_old) | "OldPairsStaying" >> beam.Flatten()
        final = paired.filtered.kept | "NotInTable" >> NotInTable(staying)

        written = self._write(affected, groups.fresh, staying, final.kept)
        rejects = clean.read.rejected | "WriteRejects" >> WriteRejects(job.rejects_dir)
        counts = (
            clean.counts,
            state.books | "CountRetractRows" >> CountStage(RETRACT_ROWS, taken_in=old_rows),
            affected.books | "CountAffectedPivots" >> CountStage(AFFECTED_PIVOTS, taken_in=rows),
            groups.counts,
            paired.counts,
            final | "CountNotInTable" >> CountStage(NOT_IN_TABLE, taken_in=paired.filtered.kept),
            staying | "CountStaying" >> CountNote(TABLE, OLD_KEPT),
            paired.made.gone | "CountGone" >> CountNote(TABLE, OLD_REPLACED),
            written.state_rows | "CountStateRows" >> CountNote(TABLE, STATE_ROWS),
            written.pair_rows | "CountPairRows" >> CountNote(TABLE, PAIR_ROWS),
        ) | "AllCounts" >> GatherCounts(REFRESH_STAGES, REFRESH_FIGURES)
        threshold = p | "ThresholdRecord" >> ThresholdRecord(groups)
        summary = p | "WriteSummary" >> WriteSummary(
            job.summary_url,
            counts,
            threshold,
            rejects.files,
            rejects.written,
            written.state_files,
            written.pair_files,
            clean.prefiltered.sides,
        )
        return RefreshedParaphrases(written.state_files, written.pair_files, summary)

    def _old_pairs(self, p: beam.Pipeline, affected_keys: beam.PCollection) -> _OldPairs:
        """The table's pairs: carried where their pivot is not affected, revisited where it is."""
        old_pairs = (
            p
            | "PairFiles" >> beam.Create(list(self.job.pair_files))
            | "SpreadPairFiles" >> beam.Reshuffle()
            | "ReadPairs" >> beam.FlatMap(read_pair_file)
        )
        by_pivot = (
            {
                "affected": affected_keys
                | "AffectedKeyedForPairs" >> beam.Map(lambda k: (k, None)),
                "pairs": old_pairs
                | "OldPairsByPivot" >> beam.Map(lambda r: (group_key(r.pivot_lang, r.pivot), r)),
            }
            | "JoinOldPairs" >> beam.CoGroupByKey()
            | "CarryOrRevisit"
            >> beam.FlatMap(_carry_or_revisit).with_outputs("revisit", main="carried")
        )
        return _OldPairs(by_pivot["carried"], by_pivot["revisit"])

    def _write(
        self,
        affected: Affected,
        fresh: list[beam.PCollection],
        staying: beam.PCollection,
        new_pairs: beam.PCollection,
    ) -> _Written:
        """Every touched bucket of both tables, written whole."""
        job = self.job
        buckets = job.buckets
        touched = (
            affected.keys
            # Buckets by the pivot's text alone, as the tables have always been laid out.
            | "Buckets" >> beam.Map(lambda key: bucket_of(key[1], buckets))
            | "DistinctBuckets" >> beam.Distinct()
        )
        touched_side = beam.pvalue.AsList(touched)
        fresh_cosines = (
            fresh
            | "FreshScores" >> beam.Flatten()
            | "FreshByTexts" >> beam.Map(lambda s: ((s.pair.pivot, s.pair.candidate), s.score))
        )
        affected_rows = (
            {
                "rows": affected.books.kept
                | "AffectedByTexts" >> beam.Map(lambda r: ((r.pair.pivot, r.pair.candidate), r)),
                "cosine": fresh_cosines,
            }
            | "JoinFresh" >> beam.CoGroupByKey()
            | "WithCosine" >> beam.FlatMap(_updated_row)
        )
        state_rows = (
            (affected_rows, affected.unchanged)
            | "StateRows" >> beam.Flatten()
            | "StateRecords" >> beam.Map(state_row, buckets)
            | "InTouchedState" >> beam.Filter(_in_touched, touched_side)
        )
        pair_rows = (
            (staying, new_pairs)
            | "TablePairs" >> beam.Flatten()
            | "PairRecords" >> beam.Map(pair_record, buckets)
            | "InTouchedPairs" >> beam.Filter(_in_touched, touched_side)
        )
        state_files = state_rows | "WriteState" >> WriteBuckets(
            job.state_dir, job.run_id, STATE_SCHEMA, touched
        )
        pair_files = pair_rows | "WritePairs" >> WriteBuckets(
            job.root, job.run_id, PAIRS_TABLE_SCHEMA, touched
        )
        return _Written(state_rows, pair_rows, state_files, pair_files)


class _Written(NamedTuple):
    state_rows: beam.PCollection
    pair_rows: beam.PCollection
    state_files: beam.PCollection
    pair_files: beam.PCollection
