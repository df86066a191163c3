"""ReadBitext: shards in, AlignedPair records and rejections out.

Shards | Spread | Split | SpreadSpans | Read | KeyRejects | FirstRejects | RejectRows

``Split`` cuts each big uncompressed line-format file (or Moses pair) into
spans of about ``ReaderOptions.split_bytes``, and ``SpreadSpans`` hands the
spans to different workers, so one 40 GB file is read by many workers at once.

Every rejection is counted, but only the first
``ReaderOptions.max_rejects_per_reason`` of each (reason, shard), by line,
become reject rows: a file of a million blank lines gives one count of a
million and a thousand rows of evidence, not a million rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.combiners import TopCombineFn
from paramine.pipelines.core.accounting import DROPPED, Dropper, progress_file
from paramine.pipelines.core.batches import Rows
from paramine.pipelines.core.coders import register_coders
from paramine.pipelines.core.tap import Tap, tap_for
from paramine.pipelines.formats import ReaderOptions, Repair, Shard, read_shard, split_shard
from paramine.schemas.records import AlignedPair, Rejected
from paramine.schemas.run_counts import REPAIRS
from paramine.schemas.stages import ALIGNED_PAIR, Stage

#: The readers' reasons are an open set (docs/formats.md lists them): every
#: read drop is counted; the first rows of each reason and shard are kept
#: as rejects (``ReaderOptions.max_rejects_per_reason``).
READ_BITEXT = Stage(
    "ReadBitext", ALIGNED_PAIR, None, "read the shards; unreadable records become rejects"
)

REJECTED = "rejected"
#: Pairs a ``Rows`` of the reader's output holds.
ROWS = 1024
#: Stage name of the repair rows, beside the ledger stages: a repaired pair
#: is kept (and counted as kept by ``read``), so repairs are no drops.
REPAIRS_STAGE = REPAIRS


def reject_order(rejected: Rejected) -> tuple[int, str]:
    """Which rejections of a (reason, shard) are written first: by line, then record.

    A total order on what a shard's reader yields, so the rows kept do not
    depend on which worker read which span first.
    """
    return rejected.line, rejected.record


class ReadOutput(NamedTuple):
    """AlignedPair records, ``(reason, n)`` drops, the Rejected records, and repairs.

    ``dropped`` counts every rejection; ``rejected`` holds at most
    ``max_rejects_per_reason`` of them per (reason, shard), the first by line.

    ``repairs`` holds ``("repairs", reason, n)`` rows, the shape of the
    count rows that ``WriteDataset`` folds into the manifest: flattened into
    the counts they give ``counts["repairs"]``, a stage that
    ``accounting_errors`` does not check (its pairs are kept and counted).
    """

    kept: beam.PCollection
    dropped: beam.PCollection
    rejected: beam.PCollection
    repairs: beam.PCollection


class _SplitShardFn(beam.DoFn):
    def __init__(self, options: ReaderOptions) -> None:
        self.options = options

    def process(self, shard: Shard) -> Iterator[Shard]:
        yield from split_shard(shard, self.options)


class _ReadShardFn(beam.DoFn):
    """Reads one shard (or span); counts its pairs and bytes into ``progress``, if any.

    Its outputs are ``Rows`` (``core.batches``): the pairs a thousand at a
    time, which the Prefilter's DoFn and the books take as they are, and the
    span's drops (summed per reason), rejects and repairs at its end.
    """

    def __init__(self, options: ReaderOptions, progress: str = "") -> None:
        self.options = options
        self.progress = progress
        self.drop = Dropper(READ_BITEXT)
        self._repair_counters: dict[str, object] = {}

    @beam.DoFn.yields_batches
    def process(self, shard: Shard) -> Iterator:
        with tap_for(self.progress).reading() as tap:
            yield from self._read(shard, tap)

    def get_output_batch_type(self, input_element_type: Any) -> Any:
        return Rows

    def infer_output_type(self, input_type: Any) -> Any:
        return AlignedPair

    def _read(self, shard: Shard, tap: Tap) -> Iterator:
        limit = self.options.max_rejects_per_reason
        # The first `limit` rejections of each reason in this span; the rest
        # are counted only. Trimmed at twice the limit: memory stays bounded
        # whatever the order a reader yields in. Without a limit, every one
        # goes out, a thousand at a time.
        first: dict[str, list[Rejected]] = {}
        dropped: dict[str, int] = {}
        repaired: dict[str, int] = {}
        pairs, rejects = Rows(), Rows()
        for result in read_shard(shard, self.options):
            if isinstance(result, AlignedPair):
                pairs.append(result)
                if len(pairs) == ROWS:
                    # The progress hears of pairs a thousand at a time: a
                    # report per pair took a lock per pair.
                    tap.add(pairs=ROWS)
                    yield pairs
                    pairs = Rows()
            elif isinstance(result, Repair):
                self._count_repair(result.reason)
                repaired[result.reason] = repaired.get(result.reason, 0) + 1
            else:
                dropped[result.reason] = dropped.get(result.reason, 0) + 1
                rows = first.setdefault(result.reason, []) if limit else rejects
                rows.append(result)
                if not limit and len(rejects) == ROWS:
                    yield beam.pvalue.TaggedOutput(REJECTED, rejects)
                    rejects = Rows()
                elif limit and len(rows) >= 2 * limit:
                    rows.sort(key=reject_order)
                    del rows[limit:]
        tap.add(pairs=len(pairs))
        if pairs:
            yield pairs
        for rows in first.values():
            rejects.extend(sorted(rows, key=reject_order)[:limit])
        if rejects:
            yield beam.pvalue.TaggedOutput(REJECTED, rejects)
        if dropped:
            drops = Rows(self.drop(reason, n).value for reason, n in dropped.items())
            yield beam.pvalue.TaggedOutput(DROPPED, drops)
        if repaired:
            yield beam.pvalue.TaggedOutput(REPAIRS, Rows(repaired.items()))

    def finish_bundle(self) -> None:
        # The launcher's bar gets the last counts before the run ends.
        tap_for(self.progress).flush()

    def _count_repair(self, reason: str) -> None:
        counter = self._repair_counters.get(reason)
        if counter is None:
            counter = Metrics.counter("paramine", f"{REPAIRS_STAGE}.{reason}")
            self._repair_counters[reason] = counter
        counter.inc()  # type: ignore[attr-defined]

    def __getstate__(self) -> dict:
        # Counters are per worker; they are made again after unpickling. The
        # rest goes too: Beam's batch converters are set on the DoFn.
        return {**self.__dict__, "_repair_counters": {}}


class ReadBitext(beam.PTransform):
    """Reads every shard; what cannot be read goes to the rejects output.

    No shard gives empty outputs: a refresh with nothing new reads nothing
    (``paramine mine`` refuses an empty input list before it gets here).
    """

    def __init__(self, shards: list[Shard], options: ReaderOptions | None = None) -> None:
        super().__init__()
        self.shards = shards
        self.options = options or ReaderOptions()

    def expand(self, pbegin: beam.pvalue.PBegin) -> ReadOutput:
        register_coders()
        results = (
            pbegin
            | "Shards" >> beam.Create(self.shards)
            # One shard per worker rather than all on the one that created them.
            | "Spread" >> beam.Reshuffle()
            | "Split" >> beam.ParDo(_SplitShardFn(self.options))
            | "SpreadSpans" >> beam.Reshuffle()
            | "Read"
            >> beam.ParDo(_ReadShardFn(self.options, progress_file(pbegin.pipeline)))
            # Typed, so that the pairs the runner encodes use their compact
            # coder rather than pickle (2.3 -> 1.3 us a pair).
            .with_output_types(AlignedPair)
            .with_outputs(DROPPED, REJECTED, REPAIRS, main="pairs")
        )
        rejected = results[REJECTED]
        limit = self.options.max_rejects_per_reason
        if limit:
            # A span's reader kept its own first rows; these are the first of
            # the whole shard, whichever spans they came from.
            rejected = (
                rejected
                | "KeyRejects" >> beam.Map(lambda r: ((r.reason, r.shard), r))
                | "FirstRejects"
                >> beam.CombinePerKey(TopCombineFn(limit, key=reject_order, reverse=True))
                | "RejectRows" >> beam.FlatMap(lambda keyed: keyed[1])
            )
        repairs = (
            results[REPAIRS]
            | "SumRepairs" >> beam.CombinePerKey(sum)
            | "TagRepairs" >> beam.MapTuple(lambda reason, n: (REPAIRS_STAGE, reason, n))
        )
        return ReadOutput(results["pairs"], results[DROPPED], rejected, repairs)
