"""ReadBitext: shards in, AlignedPair records and rejections out.

Shards | Spread | Split | SpreadSpans | Read

``Split`` cuts each big uncompressed line-format file (or Moses pair) into
spans of about ``ReaderOptions.split_bytes``, and ``SpreadSpans`` hands the
spans to different workers, so one 40 GB file is read by many workers at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipelines.accounting import DROPPED, REPAIRS, Dropper
from pipelines.formats import ReaderOptions, Repair, Shard, read_shard, split_shard
from schemas.records import AlignedPair

REJECTED = "rejected"
#: Stage name of the repair rows, beside the ledger stages: a repaired pair
#: is kept (and counted as kept by ``read``), so repairs are no drops.
REPAIRS_STAGE = REPAIRS


class ReadOutput(NamedTuple):
    """AlignedPair records, ``(reason, n)`` drops, the Rejected records, and repairs.

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
    def __init__(self, options: ReaderOptions) -> None:
        self.options = options
        self.drop = Dropper("read")
        self._repair_counters: dict[str, object] = {}

    def process(self, shard: Shard) -> Iterator:
        for result in read_shard(shard, self.options):
            if isinstance(result, AlignedPair):
                yield result
            elif isinstance(result, Repair):
                self._count_repair(result.reason)
                yield beam.pvalue.TaggedOutput(REPAIRS, (result.reason, 1))
            else:
                yield beam.pvalue.TaggedOutput(REJECTED, result)
                yield self.drop(result.reason)

    def _count_repair(self, reason: str) -> None:
        counter = self._repair_counters.get(reason)
        if counter is None:
            counter = Metrics.counter("paramine", f"{REPAIRS_STAGE}.{reason}")
            self._repair_counters[reason] = counter
        counter.inc()  # type: ignore[attr-defined]

    def __getstate__(self) -> dict:
        # Counters are per worker; they are made again after unpickling.
        return {"options": self.options, "drop": self.drop, "_repair_counters": {}}


class ReadBitext(beam.PTransform):
    """Reads every shard; what cannot be read goes to the rejects output."""

    def __init__(self, shards: list[Shard], options: ReaderOptions | None = None) -> None:
        super().__init__()
        if not shards:
            raise ValueError("ReadBitext needs at least one shard")
        self.shards = shards
        self.options = options or ReaderOptions()

    def expand(self, pbegin: beam.pvalue.PBegin) -> ReadOutput:
        results = (
            pbegin
            | "Shards" >> beam.Create(self.shards)
            # One shard per worker rather than all on the one that created them.
            | "Spread" >> beam.Reshuffle()
            | "Split" >> beam.ParDo(_SplitShardFn(self.options))
            | "SpreadSpans" >> beam.Reshuffle()
            | "Read"
            >> beam.ParDo(_ReadShardFn(self.options)).with_outputs(
                DROPPED, REJECTED, REPAIRS, main="pairs"
            )
        )
        repairs = (
            results[REPAIRS]
            | "SumRepairs" >> beam.CombinePerKey(sum)
            | "TagRepairs" >> beam.MapTuple(lambda reason, n: (REPAIRS_STAGE, reason, n))
        )
        return ReadOutput(results["pairs"], results[DROPPED], results[REJECTED], repairs)
