"""ReadBitext: shards in, AlignedPair records and rejections out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import apache_beam as beam

from pipelines.accounting import DROPPED, Dropper
from pipelines.formats import ReaderOptions, Shard, read_shard
from schemas.records import AlignedPair

REJECTED = "rejected"


class ReadOutput(NamedTuple):
    """AlignedPair records, ``(reason, n)`` drops, and the Rejected records."""

    kept: beam.PCollection
    dropped: beam.PCollection
    rejected: beam.PCollection


class _ReadShardFn(beam.DoFn):
    def __init__(self, options: ReaderOptions) -> None:
        self.options = options
        self.drop = Dropper("read")

    def process(self, shard: Shard) -> Iterator:
        for result in read_shard(shard, self.options):
            if isinstance(result, AlignedPair):
                yield result
            else:
                yield beam.pvalue.TaggedOutput(REJECTED, result)
                yield self.drop(result.reason)


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
            | "Read"
            >> beam.ParDo(_ReadShardFn(self.options)).with_outputs(DROPPED, REJECTED, main="pairs")
        )
        return ReadOutput(results["pairs"], results[DROPPED], results[REJECTED])
