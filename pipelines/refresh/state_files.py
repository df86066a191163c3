"""The refresh tables' files: state rows and pairs read from them, bucket files written.

A refresh keeps two tables (pipelines/refresh/table.py): the *state*, every
aligned pair seen before with its cosine once scored, and the *pairs*. Both
are split in buckets by pivot key; a run rewrites each bucket it touches as
one new file, which nothing reads until the launcher commits it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from paramine.pipelines.core.groups import pivot_key
from paramine.schemas.dataset import pair_row
from paramine.schemas.records import AlignedPair, ParaphrasePair
from paramine.schemas.table import BUCKET, TableFile, bucket_of, file_schema

#: Rows per Parquet row group of a bucket file.
ROW_GROUP = 10_000


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


def pair_record(pair: ParaphrasePair, buckets: int) -> dict[str, Any]:
    """The pairs table's row of a pair."""
    row = pair_row(pair)
    row[BUCKET] = bucket_of(pivot_key(pair.pivot), buckets)
    return row
