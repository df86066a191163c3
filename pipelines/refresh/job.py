"""RefreshParaphrases: the Beam job of one ``paramine refresh`` commit.

new shards | ReadBitext | Prefilter ------------------------------.
state table | "Retract" (rows of changed or removed shards leave) -+-> "Affected"
                                                                    |
  the pivots whose pairs can change: those with a new or retracted  |
  row, and those that share a candidate with one (its rival pivots) |
                                                                    v
  GroupByPivot | score (stored cosine, or encode) | Contest | Threshold
  | Coherence | RegroupByPivot | MakePairs (cover: keep the old pairs) | PostFilter
                                                                    |
  every bucket that holds an affected pivot is written again, whole: v
  its unchanged rows as they were, the affected ones as mined now --> bucket files

The graph is the mining graph of ``paramine mine`` (pipelines/mine_paraphrases.py)
applied to the affected pivots of the union of the old and the new input, so
that, with a fixed threshold, the table holds what one run over all the
input would write. A row that was scored once keeps its cosine in the state
and is not encoded again, unless the run needs vectors (margin scoring and
group coherence, with ``--threshold auto``). Workers write the bucket files
into the tables' folders, where nothing reads them until the launcher
commits them (pipelines/refresh/update.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import apache_beam as beam
import fsspec
from paramine.pipelines.core.accounting import (
    DROPPED,
    ENCODING,
    TABLE,
    CountNote,
    CountStage,
    Dropper,
    GatherCounts,
    StageResult,
)
from paramine.pipelines.core.groups import Group, GroupKey, group_key
from paramine.pipelines.formats import Shard
from paramine.pipelines.mine_paraphrases import (
    MINE_STAGES,
    ScoreGroups,
    ThresholdRecord,
    count_mined_groups,
    prefilter_options,
    reader_options,
)
from paramine.pipelines.refresh.affected import (
    AFFECTED,
    STATE,
    AffectedPivots,
    RetractFn,
    SplitAffectedFn,
)
from paramine.pipelines.refresh.state_files import (
    StateRow,
    WriteBuckets,
    pair_record,
    read_pair_file,
    read_state_file,
    state_row,
)
from paramine.pipelines.run.config import MineConfig
from paramine.pipelines.stages.group_by_pivot import GROUP, GroupByPivot
from paramine.pipelines.stages.make_pairs import MakePairs, extend_cover
from paramine.pipelines.stages.postfilter import POSTFILTER, PostFilter
from paramine.pipelines.stages.prefilter import PREFILTER, Prefilter
from paramine.pipelines.stages.read_bitext import READ, ReadBitext
from paramine.pipelines.stages.regroup_by_pivot import RegroupByPivot
from paramine.schemas.dataset import REJECTS_SCHEMA, reject_row
from paramine.schemas.records import ParaphrasePair
from paramine.schemas.stages import Stage
from paramine.schemas.table import (
    BUCKET,
    PAIRS_TABLE_SCHEMA,
    STATE_SCHEMA,
    TableFile,
    bucket_of,
)

#: The stages of a refresh commit, in order (the manifest records them).
#: Those of ``paramine mine``, with the state's and the affected pivots' books
#: between the prefilter and grouping.
REFRESH_STAGES: tuple[Stage, ...] = (
    *MINE_STAGES[: MINE_STAGES.index(GROUP)],
    STATE,
    AFFECTED,
    *MINE_STAGES[MINE_STAGES.index(GROUP) :],
)

#: The refresh's figures of its table rewrite (``counts["table"]``).
OLD_KEPT = "old_pairs_kept"
OLD_REPLACED = "old_pairs_replaced"
STATE_ROWS = "state_rows_written"
PAIR_ROWS = "pair_rows_written"
TABLE_KEYS = (OLD_KEPT, OLD_REPLACED, STATE_ROWS, PAIR_ROWS)


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


# ------------------------------------------------------------------ the graph


def _updated_row(joined: tuple[tuple[str, str], dict[str, list]]) -> Iterator[StateRow]:
    _, sides = joined
    fresh = sides["cosine"]
    for row in sides["rows"]:
        yield StateRow(row.pair, float(fresh[0])) if fresh else row


def _carry_or_revisit(joined: tuple[GroupKey, dict[str, list]]) -> Iterator:
    """Old pairs of one pivot: carried as they are, or handed to the pivot's new group."""
    key, sides = joined
    if sides["affected"]:
        yield beam.pvalue.TaggedOutput("revisit", (key, sides["pairs"]))
    else:
        yield from sides["pairs"]


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


class RefreshedParaphrases(NamedTuple):
    """What ``RefreshParaphrases`` writes: file URLs per table, and the summary it wrote."""

    state_files: beam.PCollection
    pair_files: beam.PCollection
    summary: beam.PCollection


def _in_touched(row: dict[str, Any], touched: list[int]) -> bool:
    return row[BUCKET] in touched


class RefreshParaphrases(beam.PTransform):
    """The refresh's mining graph and its writes (module docstring).

    Args:
        config: The mining settings (the same as ``paramine mine``'s).
        job: What to read and write.
    """

    def __init__(self, config: MineConfig, job: RefreshJob) -> None:
        super().__init__()
        self.config = config
        self.job = job

    def expand(self, pbegin: beam.pvalue.PBegin) -> RefreshedParaphrases:
        config, job = self.config, self.job
        p = pbegin.pipeline
        buckets = job.buckets
        # Margin rescoring, the contest's relative rule and the group checks
        # need the vectors of every candidate of a changed group; otherwise a
        # stored cosine stands.
        coherent_check = config.calibrated and (
            config.coherence_min_group is not None or config.group_support is not None
        )
        needs_vectors = (
            config.margin
            or coherent_check
            or config.rival_margin is not None
            or config.hard_negative_accept is not None
        )

        # New input (perhaps none), read and prefiltered as by `paramine mine`.
        read = pbegin | "ReadBitext" >> ReadBitext(list(job.shards), reader_options(config))
        read_kept, rejected = read.kept, read.rejected
        prefiltered = read_kept | "Prefilter" >> Prefilter(prefilter_options(config), job.shards)
        new = prefiltered.kept

        # The state, less what is retracted.
        old_rows = (
            p
            | "StateFiles" >> beam.Create(list(job.state_files))
            | "SpreadStateFiles" >> beam.Reshuffle()
            | "ReadState" >> beam.FlatMap(read_state_file)
        )
        retract = old_rows | "Retract" >> beam.ParDo(RetractFn(job.retracted)).with_outputs(
            DROPPED, "retracted", main="kept"
        )
        state = StageResult(retract["kept"], retract[DROPPED])
        retracted = retract["retracted"]
        rows = (
            state.kept,
            new | "AsStateRows" >> beam.Map(StateRow),
        ) | "CurrentRows" >> beam.Flatten()
        current = rows | "CurrentPairs" >> beam.Map(lambda r: r.pair)

        affected_keys = new | "AffectedPivots" >> AffectedPivots(current, retracted)
        touched = (
            affected_keys
            # Buckets by the pivot's text alone, as the tables have always been laid out.
            | "Buckets" >> beam.Map(lambda key: bucket_of(key[1], buckets))
            | "DistinctBuckets" >> beam.Distinct()
        )
        split = (
            {
                "affected": affected_keys | "AffectedKeyed" >> beam.Map(lambda k: (k, None)),
                "rows": rows
                | "RowsByPivot"
                >> beam.Map(lambda r: (group_key(r.pair.pivot_lang, r.pair.pivot), r)),
            }
            | "JoinAffected" >> beam.CoGroupByKey()
            | "SplitAffected"
            >> beam.ParDo(SplitAffectedFn()).with_outputs(DROPPED, "unchanged", main="affected")
        )
        affected = StageResult(split["affected"], split[DROPPED])
        affected_pairs = affected.kept | "AffectedPairs" >> beam.Map(lambda r: r.pair)

        # Mining, as in MineParaphrases, on the affected pivots.
        grouped = affected_pairs | "GroupByPivot" >> GroupByPivot(config.max_group_size)
        known = None
        if not needs_vectors:
            known = rows | "StoredCosines" >> StoredCosines()
        core = grouped.kept | "ScoreGroups" >> ScoreGroups(config, current, known=known)
        groups = core.coherent.kept | "RegroupByPivot" >> RegroupByPivot(config.max_group_size)

        # The old pairs: carried where their pivot is not affected, handed to
        # the new group where it is (cover keeps those still whole).
        old_pairs = (
            p
            | "PairFiles" >> beam.Create(list(job.pair_files))
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
        carried = by_pivot["carried"]
        revisit = by_pivot["revisit"]
        if config.pair_mode == "cover":
            extended = (
                {
                    "group": groups.kept
                    | "GroupsByKey" >> beam.Map(lambda g: (group_key(g.pivot_lang, g.pivot), g)),
                    "old": revisit,
                }
                | "JoinOldGroups" >> beam.CoGroupByKey()
                | "ExtendCover"
                >> beam.ParDo(
                    _ExtendCoverFn(config.near_equal, config.drop_inflection_pairs)
                ).with_outputs("kept_old", "gone", main="new")
            )
            made = extended["new"]
            kept_old = extended["kept_old"]
            gone = extended["gone"]
        else:
            made = groups.kept | "MakePairs" >> MakePairs(
                config.pair_mode,
                config.max_pairs_per_group,
                config.near_equal,
                config.drop_inflection_pairs,
            )
            kept_old = p | "NoOldPairsKept" >> beam.Create([])
            # All mode makes every pair of the new group again.
            gone = revisit | "AllOldReplaced" >> beam.FlatMap(lambda kv: kv[1])
        filtered = made | "PostFilter" >> PostFilter(
            config.near_equal, config.drop_inflection_pairs
        )
        staying = (carried, kept_old) | "OldPairsStaying" >> beam.Flatten()
        deduped = filtered.kept | "NotInTable" >> _NotInTable(staying)
        final = StageResult(
            deduped.kept, (filtered.dropped, deduped.dropped) | "PostDrops" >> beam.Flatten()
        )

        # Writes: every touched bucket, whole.
        touched_side = beam.pvalue.AsList(touched)
        fresh_cosines = (
            core.fresh
            | "FreshScores" >> beam.Flatten()
            | "FreshByTexts" >> beam.Map(lambda s: ((s.pair.pivot, s.pair.candidate), s.score))
        )
        affected_rows = (
            {
                "rows": affected.kept
                | "AffectedByTexts" >> beam.Map(lambda r: ((r.pair.pivot, r.pair.candidate), r)),
                "cosine": fresh_cosines,
            }
            | "JoinFresh" >> beam.CoGroupByKey()
            | "WithCosine" >> beam.FlatMap(_updated_row)
        )
        state_rows = (
            (affected_rows, split["unchanged"])
            | "StateRows" >> beam.Flatten()
            | "StateRecords" >> beam.Map(state_row, buckets)
            | "InTouchedState" >> beam.Filter(_in_touched, touched_side)
        )
        pair_rows = (
            (staying, final.kept)
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
        reject_files = (
            rejected
            | "RejectRows" >> beam.Map(reject_row)
            | "WriteRejects"
            >> beam.io.WriteToParquet(
                f"{job.rejects_dir}/part", REJECTS_SCHEMA, file_name_suffix=".parquet"
            )
        )
        written_rejects = (
            rejected
            | "RejectReasons" >> beam.Map(lambda r: r.reason)
            | "CountWrittenRejects" >> beam.combiners.Count.PerElement()
        )

        counts = (
            StageResult(read.kept, read.dropped) | "CountRead" >> CountStage(READ),
            StageResult(prefiltered.kept, prefiltered.dropped)
            | "CountPrefilter" >> CountStage(PREFILTER, taken_in=read_kept),
            state | "CountState" >> CountStage(STATE, taken_in=old_rows),
            affected | "CountAffected" >> CountStage(AFFECTED, taken_in=rows),
            grouped | "CountGroup" >> CountStage(GROUP, taken_in=affected.kept),
            *count_mined_groups(grouped, core, groups),
            final | "CountPostFilter" >> CountStage(POSTFILTER, taken_in=made),
            read.repairs,
            core.vectors | "CountTexts" >> CountNote(ENCODING, "texts_encoded", "text"),
            staying | "CountStaying" >> CountNote(TABLE, OLD_KEPT),
            gone | "CountGone" >> CountNote(TABLE, OLD_REPLACED),
            state_rows | "CountStateRows" >> CountNote(TABLE, STATE_ROWS),
            pair_rows | "CountPairRows" >> CountNote(TABLE, PAIR_ROWS),
        ) | "AllCounts" >> GatherCounts(
            REFRESH_STAGES,
            [
                (ENCODING, "texts_encoded"),
                *((TABLE, key) for key in TABLE_KEYS),
            ],
        )
        threshold = p | "ThresholdRecord" >> ThresholdRecord(core)
        summary_url = job.summary_url

        def write_summary(_: None, **side: Any) -> str:
            record = {
                "counts": [list(row) for row in side["counts"]],
                "threshold": side["threshold"],
                "rejects": {
                    "files": sorted(side["rejects"]),
                    "written": dict(sorted(side["written"])),
                },
                "files": {"state": sorted(side["state"]), "pairs": sorted(side["pairs"])},
            }
            with fsspec.open(summary_url, "w", encoding="utf-8") as handle:
                json.dump(record, handle, sort_keys=True)
            return summary_url

        summary = (
            p
            | "Once" >> beam.Create([None])
            | "WriteSummary"
            >> beam.Map(
                write_summary,
                counts=beam.pvalue.AsList(counts),
                threshold=beam.pvalue.AsSingleton(threshold),
                rejects=beam.pvalue.AsList(reject_files),
                written=beam.pvalue.AsList(written_rejects),
                state=beam.pvalue.AsList(state_files),
                pairs=beam.pvalue.AsList(pair_files),
            )
        )
        return RefreshedParaphrases(state_files, pair_files, summary)


class _ExtendCoverFn(beam.DoFn):
    """Cover mode: a pivot keeps its old pairs that are still whole, and covers the rest."""

    def __init__(self, near_equal: float, drop_inflections: bool) -> None:
        self.near_equal = near_equal
        self.drop_inflections = drop_inflections

    def process(self, joined: tuple[GroupKey, dict[str, list]]) -> Iterator:
        _, sides = joined
        old: list[ParaphrasePair] = [pair for pairs in sides["old"] for pair in pairs]
        group: Group | None = sides["group"][0] if sides["group"] else None
        members = {c.pair.candidate for c in group.candidates} if group is not None else set()
        whole = [pair for pair in old if {pair.sentence_a, pair.sentence_b} <= members]
        for pair in old:
            tag = "kept_old" if pair in whole else "gone"
            yield beam.pvalue.TaggedOutput(tag, pair)
        if group is not None:
            covered = [(pair.sentence_a, pair.sentence_b) for pair in whole]
            yield from extend_cover(group, covered, self.near_equal, self.drop_inflections)


class _NotInTable(beam.PTransform):
    """Drops a new pair whose ``pair_id`` an old pair that stays in the table already has."""

    def __init__(self, staying: beam.PCollection) -> None:
        super().__init__()
        self.staying = staying

    def expand(self, pairs: beam.PCollection) -> StageResult:
        drop = Dropper(POSTFILTER)

        def check(joined: tuple[str, dict[str, list]]) -> Iterator:
            _, sides = joined
            for pair in sides["new"]:
                if sides["old"]:
                    yield drop("duplicate_across_groups")
                else:
                    yield pair

        checked = (
            {
                "new": pairs | "NewById" >> beam.Map(lambda r: (r.pair_id, r)),
                "old": self.staying | "OldById" >> beam.Map(lambda r: (r.pair_id, None)),
            }
            | "JoinIds" >> beam.CoGroupByKey()
            | "Check" >> beam.FlatMap(check).with_outputs(DROPPED, main="kept")
        )
        return StageResult(checked["kept"], checked[DROPPED])
