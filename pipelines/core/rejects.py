"""WriteRejects: the records the readers could not read, as Parquet, and how many of each reason.

``paramine mine`` (inside ``WriteDataset``) and ``paramine refresh`` write
their rejects the same way: the rows handed to the sink are counted per
reason, so that the manifest can check ``rejects/`` against them, and them
against the readers' counts (the readers count every reject, and keep the
first ``--max-rejects-per-reason`` of each reason and shard).
"""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam
from paramine.schemas.dataset import REJECTS_SCHEMA, reject_row


class WrittenRejects(NamedTuple):
    """What ``WriteRejects`` wrote: the file names, and ``(reason, rows)`` handed to the sink."""

    files: beam.PCollection
    written: beam.PCollection


class WriteRejects(beam.PTransform):
    """Writes ``Rejected`` records under ``directory/part*.parquet``.

    Args:
        directory: The folder, any URL Beam's file systems take.
        num_shards: Parquet files; 0 lets the runner decide.
    """

    def __init__(self, directory: str, num_shards: int = 0) -> None:
        super().__init__()
        self.directory = directory.rstrip("/")
        self.num_shards = num_shards

    def expand(self, rejects: beam.PCollection) -> WrittenRejects:
        files = (
            rejects
            | "RejectRows" >> beam.Map(reject_row)
            | "WriteParquet"
            >> beam.io.WriteToParquet(
                f"{self.directory}/part",
                REJECTS_SCHEMA,
                file_name_suffix=".parquet",
                num_shards=self.num_shards,
            )
        )
        written = (
            rejects
            | "RejectReasons" >> beam.Map(lambda r: r.reason)
            | "CountPerReason" >> beam.combiners.Count.PerElement()
        )
        return WrittenRejects(files, written)
