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
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import apache_beam as beam
import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from paramine.pipelines.core.accounting import (
    DROPPED,
    ENCODING,
    TABLE,
    CountNote,
    CountStage,
    Dropper,
    StageResult,
)
from paramine.pipelines.core.groups import Group, GroupKey, group_key, pivot_key, pivot_language
from paramine.pipelines.core.text import comparison_key
from paramine.pipelines.formats import Shard
from paramine.pipelines.mine_paraphrases import (
    MINE_STAGES,
    ScoreGroups,
    ThresholdRecord,
    count_mined_groups,
    prefilter_options,
    reader_options,
)
from paramine.pipelines.run.config import MineConfig
from paramine.pipelines.stages.group_by_pivot import GROUP, GroupByPivot
from paramine.pipelines.stages.make_pairs import MakePairs, extend_cover
from paramine.pipelines.stages.postfilter import POSTFILTER, PostFilter
from paramine.pipelines.stages.prefilter import PREFILTER, Prefilter
from paramine.pipelines.stages.read_bitext import READ, ReadBitext
from paramine.pipelines.stages.regroup_by_pivot import RegroupByPivot
from paramine.schemas.dataset import REJECTS_SCHEMA, pair_row, reject_row
from paramine.schemas.records import AlignedPair, ParaphrasePair
from paramine.schemas.stages import ALIGNED_PAIR, Stage
from paramine.schemas.table import (
    BUCKET,
    PAIRS_TABLE_SCHEMA,
    STATE_SCHEMA,
    TableFile,
    bucket_of,
    file_schema,
)

STATE_ROW = "state row"
STATE = Stage(
    "state",
    STATE_ROW,
    ("retracted",),
    "the table's state, every aligned pair seen before: rows of shards that changed or left "
    "the inputs are retracted",
)
AFFECTED = Stage(
    "affected",
    ALIGNED_PAIR,
    ("unchanged",),
    "the new pairs and the state's pairs of every pivot whose pairs can change go on to be "
    "mined; the other pivots' rows and pairs stay in the table as they are",
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

#: Rows per Parquet row group of a bucket file.
ROW_GROUP = 10_000


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


@dataclass(frozen=True)
class StateRow:
    """An aligned pair of the state, with its cosine once it has been scored."""

    pair: AlignedPair
    cosine: float | None = None


# ------------------------------------------------------------------ reading


def _read_rows(file: TableFile) -> Iterator[dict[str, Any]]:
    fs, path = fsspec.core.url_to_fs(file.url)
    with fs.open(path, "rb") as handle:
        parquet = pq.ParquetFile(handle)
        for batch in parquet.iter_batches(batch_size=ROW_GROUP):
            yield from batch.to_pylist()


def read_state_file(file: TableFile) -> Iterator[StateRow]:
    """The rows of one state file."""
    for row in _read_rows(file):
        pair = AlignedPair(
            pivot=row["pivot"],
            candidate=row["candidate"],
            pivot_lang=row["pivot_lang"],
            lang=row["lang"],
            corpus=row["corpus"],
            shard=row["shard"],
            line=row["line"],
        )
        yield StateRow(pair, row["cosine"])


def read_pair_file(file: TableFile) -> Iterator[ParaphrasePair]:
    """The pairs of one pairs file."""
    for row in _read_rows(file):
        row["pivot"] = row.pop("pivot_sentence")
        yield ParaphrasePair(**row)


# ------------------------------------------------------------------ writing


def state_row(row: StateRow, buckets: int) -> dict[str, Any]:
    """The state table's row of a state row."""
    pair = row.pair
    key = pivot_key(pair.pivot)
    return {
        "pivot_key": key,
        "pivot": pair.pivot,
        "candidate": pair.candidate,
        "pivot_lang": pair.pivot_lang,
        "lang": pair.lang,
        "corpus": pair.corpus,
        "shard": pair.shard,
        "line": pair.line,
        "cosine": row.cosine,
        BUCKET: bucket_of(key, buckets),
    }


class _WriteBucketFn(beam.DoFn):
    """Writes one bucket's rows (streamed in row groups) to ``<dir>/bucket=N/part-<run>-N``.

    The name depends only on the run and the bucket, so a retried bundle
    writes the same file again rather than a second one.
    """

    def __init__(self, directory: str, run_id: str, schema: pa.Schema) -> None:
        self.directory = directory.rstrip("/")
        self.run_id = run_id
        self.schema = file_schema(schema)

    def process(self, keyed: tuple[int, Iterable[dict[str, Any] | None]]) -> Iterator[str]:
        bucket, rows = keyed
        url = f"{self.directory}/{BUCKET}={bucket}/part-{self.run_id}-{bucket:05d}.parquet"
        fs, path = fsspec.core.url_to_fs(url)
        fs.makedirs(os.path.dirname(path), exist_ok=True)
        with fs.open(path, "wb") as handle, pq.ParquetWriter(handle, self.schema) as writer:
            chunk: list[dict[str, Any]] = []
            for row in rows:
                if row is None:  # the marker of a touched bucket
                    continue
                chunk.append(row)
                if len(chunk) >= ROW_GROUP:
                    writer.write_table(pa.Table.from_pylist(chunk, self.schema))
                    chunk = []
            if chunk:
                writer.write_table(pa.Table.from_pylist(chunk, self.schema))
        # Every touched bucket gets a file, empty or not: the launcher learns
        # from the files which buckets this run replaced.
        yield url


class WriteBuckets(beam.PTransform):
    """Writes rows into one file per touched bucket (an empty file where no row falls).

    Args:
        directory: The table's root.
        run_id: The run's id, in every file name.
        schema: The table's schema (its ``bucket`` column goes into the path).
        touched: The buckets to write, even if no row falls in them.
    """

    def __init__(
        self, directory: str, run_id: str, schema: pa.Schema, touched: beam.PCollection
    ) -> None:
        super().__init__()
        self.directory = directory
        self.run_id = run_id
        self.schema = schema
        self.touched = touched

    def expand(self, rows: beam.PCollection) -> beam.PCollection:
        keyed = rows | "ByBucket" >> beam.Map(
            lambda row: (row[BUCKET], {k: v for k, v in row.items() if k != BUCKET})
        )
        markers = self.touched | "Markers" >> beam.Map(lambda bucket: (bucket, None))
        return (
            (keyed, markers)
            | "WithMarkers" >> beam.Flatten()
            | "GroupBuckets" >> beam.GroupByKey()
            | "WriteFiles" >> beam.ParDo(_WriteBucketFn(self.directory, self.run_id, self.schema))
        )


# ------------------------------------------------------------------ the graph


class _RetractFn(beam.DoFn):
    """Drops state rows of retracted shards; their pivots and candidates go to ``retracted``."""

    def __init__(self, retracted: frozenset[str]) -> None:
        self.retracted = retracted
        self.drop = Dropper(STATE)

    def process(self, row: StateRow) -> Iterator:
        if row.pair.shard in self.retracted:
            yield self.drop("retracted")
            yield beam.pvalue.TaggedOutput("retracted", row.pair)
        else:
            yield row


def _candidate_keys_of_direct(
    joined: tuple[GroupKey, dict[str, list]],
) -> Iterator[tuple[str, str]]:
    _, sides = joined
    if sides["direct"]:
        yield from set(sides["candidates"])


def _candidate_key(pair: AlignedPair) -> tuple[str, str]:
    """A candidate among the pivots of one language: where the contest looks for rivals."""
    return pivot_language(pair.pivot_lang), comparison_key(pair.candidate)


def _pivots_of_changed_candidates(
    joined: tuple[tuple[str, str], dict[str, list]],
) -> Iterator[GroupKey]:
    _, sides = joined
    if sides["changed"]:
        yield from set(sides["pivots"])


class AffectedPivots(beam.PTransform):
    """The group keys (pivot language, pivot key) whose pairs a change of rows can change.

    A pivot is affected when it has a new or retracted row (its group
    changed), or when one of its candidates is also the candidate of such a
    pivot's row (a rival pivot that joined, left, or became a group: the
    contest of ``pipelines/stages/contest_candidates.py`` may now decide otherwise).

    Args:
        current: Every aligned pair after the change (state kept + new).
        retracted: The aligned pairs retracted.
    """

    def __init__(self, current: beam.PCollection, retracted: beam.PCollection) -> None:
        super().__init__()
        self.current = current
        self.retracted = retracted

    def expand(self, new: beam.PCollection) -> beam.PCollection:
        direct = (
            (new, self.retracted)
            | "Changed" >> beam.Flatten()
            | "ChangedPivots" >> beam.Map(lambda p: group_key(p.pivot_lang, p.pivot))
            | "DistinctDirect" >> beam.Distinct()
        )
        everything = (self.current, self.retracted) | "AllRows" >> beam.Flatten()
        candidate_keys = (
            {
                "direct": direct | "DirectKeyed" >> beam.Map(lambda k: (k, None)),
                "candidates": everything
                | "CandidatesByPivot"
                >> beam.Map(lambda p: (group_key(p.pivot_lang, p.pivot), _candidate_key(p))),
            }
            | "JoinDirect" >> beam.CoGroupByKey()
            | "TheirCandidates" >> beam.FlatMap(_candidate_keys_of_direct)
            | "DistinctCandidates" >> beam.Distinct()
        )
        via_candidates = (
            {
                "changed": candidate_keys | "CandidateKeyed" >> beam.Map(lambda c: (c, None)),
                "pivots": self.current
                | "PivotsByCandidate"
                >> beam.Map(lambda p: (_candidate_key(p), group_key(p.pivot_lang, p.pivot))),
            }
            | "JoinCandidates" >> beam.CoGroupByKey()
            | "TheirPivots" >> beam.FlatMap(_pivots_of_changed_candidates)
        )
        return (direct, via_candidates) | "Both" >> beam.Flatten() | "Distinct" >> beam.Distinct()


class _SplitAffectedFn(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper(AFFECTED)

    def process(self, joined: tuple[GroupKey, dict[str, list]]) -> Iterator:
        _, sides = joined
        affected = bool(sides["affected"])
        for row in sides["rows"]:
            if affected:
                yield row
            else:
                yield self.drop("unchanged")
                yield beam.pvalue.TaggedOutput("unchanged", row)


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
        prefiltered = read_kept | "Prefilter" >> Prefilter(prefilter_options(config))
        new = prefiltered.kept

        # The state, less what is retracted.
        old_rows = (
            p
            | "StateFiles" >> beam.Create(list(job.state_files))
            | "SpreadStateFiles" >> beam.Reshuffle()
            | "ReadState" >> beam.FlatMap(read_state_file)
        )
        retract = old_rows | "Retract" >> beam.ParDo(_RetractFn(job.retracted)).with_outputs(
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
            >> beam.ParDo(_SplitAffectedFn()).with_outputs(DROPPED, "unchanged", main="affected")
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
            | "PairRecords" >> beam.Map(_pair_record, buckets)
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
            prefiltered | "CountPrefilter" >> CountStage(PREFILTER, taken_in=read_kept),
            state | "CountState" >> CountStage(STATE, taken_in=old_rows),
            affected | "CountAffected" >> CountStage(AFFECTED, taken_in=rows),
            grouped | "CountGroup" >> CountStage(GROUP, taken_in=affected.kept),
            *count_mined_groups(grouped, core, groups),
            final | "CountPostFilter" >> CountStage(POSTFILTER, taken_in=made),
            read.repairs,
            core.vectors | "CountTexts" >> CountNote(ENCODING, "texts_encoded", "text"),
            staying | "CountStaying" >> CountNote(TABLE, "old_pairs_kept"),
            gone | "CountGone" >> CountNote(TABLE, "old_pairs_replaced"),
            state_rows | "CountStateRows" >> CountNote(TABLE, "state_rows_written"),
            pair_rows | "CountPairRows" >> CountNote(TABLE, "pair_rows_written"),
        ) | "AllCounts" >> beam.Flatten()
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


def _pair_record(pair: ParaphrasePair, buckets: int) -> dict[str, Any]:
    row = pair_row(pair)
    row[BUCKET] = bucket_of(pivot_key(pair.pivot), buckets)
    return row


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
