"""A refreshed dataset: the pairs as a Delta Lake table, the refresh's state beside it.

``paramine refresh`` (pipelines/refresh/update.py) keeps its output as Delta tables,
which Spark, DuckDB, polars, pandas and Trino read, with atomic commits and
time travel from the ``deltalake`` package::

    ROOT/                              the pairs: deltalake.DeltaTable(ROOT)
      _delta_log/                      one JSON commit per version
      bucket=17/part-<run>-0017.parquet
      _paramine/
        state/                         every aligned pair seen so far: a Delta table
        rejects/<run>/part-*.parquet   what each run could not read

Both tables are partitioned by ``bucket``, a hash of the pivot's grouping key:
a pivot's pairs and its state rows live in one bucket, and a refresh rewrites
only the buckets of the pivots it touched. Delta readers skip folders whose
names start with ``_``, and so does the library's vacuum, so the state never
shows up among the pairs.

Each paramine commit of the pairs table carries the run's manifest in the
commit's own metadata (``paramine.commit``): counts, inputs, the cut. That
makes the commit the unit of everything: what readers see, what the books
describe, what ``--history`` lists. This module reads tables; only
``pipelines/refresh/update.py`` writes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from paramine.schemas.dataset import PAIRS_SCHEMA, PAIRS_SCHEMA_VERSION
from paramine.schemas.errors import DatasetError
from paramine.schemas.manifest import Manifest
from paramine.schemas.text_keys import stable_hash

STATE_DIR = "_paramine/state"
REJECTS_DIR = "_paramine/rejects"
RUNS_DIR = "_paramine/runs"
#: The folder of a Delta table's commits (the Delta protocol's name).
DELTA_LOG = "_delta_log"
BUCKET = "bucket"
#: The key of paramine's record in a commit's metadata (a JSON string).
COMMIT_KEY = "paramine.commit"
STATE_SCHEMA_VERSION = "paramine.state/1"

#: The pairs table: the dataset's rows, and the bucket they are filed under.
PAIRS_TABLE_SCHEMA = pa.schema(
    [*PAIRS_SCHEMA, pa.field(BUCKET, pa.int32(), nullable=False)],
    metadata={"paramine.schema_version": PAIRS_SCHEMA_VERSION},
)

#: The state: one row per aligned pair read and kept by the prefilter, with
#: the shard it came from and, once scored, its cross-lingual cosine. Pivots
#: with a single candidate are here too: next month may bring a second one.
STATE_SCHEMA = pa.schema(
    [
        pa.field("pivot_key", pa.string(), nullable=False),
        pa.field("pivot", pa.string(), nullable=False),
        pa.field("candidate", pa.string(), nullable=False),
        pa.field("pivot_lang", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("shard", pa.string(), nullable=False),
        pa.field("line", pa.int64(), nullable=False),
        pa.field("cosine", pa.float32(), nullable=True),
        pa.field(BUCKET, pa.int32(), nullable=False),
    ],
    metadata={"paramine.schema_version": STATE_SCHEMA_VERSION},
)


@dataclass(frozen=True)
class TableFile:
    """A data file of a table version, and the bucket it holds."""

    url: str
    bucket: int


def file_schema(schema: pa.Schema) -> pa.Schema:
    """The schema of a table's data files: Delta keeps the partition column in the log."""
    return schema.remove(schema.get_field_index(BUCKET))


def bucket_of(pivot_key: str, buckets: int) -> int:
    """The bucket of a pivot: a stable hash of its grouping key, modulo ``buckets``."""
    return stable_hash("bucket", pivot_key) % buckets


def state_url(root: str) -> str:
    """The URL of a table's state table."""
    return f"{root.rstrip('/')}/{STATE_DIR}"


def is_table(root: str, storage_options: dict[str, str] | None = None) -> bool:
    """Whether ``root`` holds a Delta table.

    A local folder without a ``_delta_log`` is answered from the file system: reading a plain
    Parquet dataset needs no ``deltalake`` (a GPU image without it mines, trains and reports).
    """
    if "://" not in root or root.startswith("file://"):
        local = Path(root.removeprefix("file://"))
        if not (local / DELTA_LOG).is_dir():
            return False
    from deltalake import DeltaTable

    return bool(DeltaTable.is_deltatable(root, storage_options=storage_options))


def open_table(
    root: str, version: int | None = None, storage_options: dict[str, str] | None = None
):
    """The Delta table at ``root``, at ``version`` or the latest.

    Raises:
        DatasetError: There is no table there, or no such version.
    """
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError, TableNotFoundError

    try:
        return DeltaTable(root, version=version, storage_options=storage_options)
    except TableNotFoundError:
        raise DatasetError(f"{root} is not a Delta table: no refresh has committed there") from None
    except DeltaError as error:
        raise DatasetError(f"{root}: cannot open version {version} ({error})") from None


def commits(table: Any, at: int | None = None) -> Iterator[dict[str, Any]]:
    """The commits of a table, newest first, up to version ``at`` (all by default).

    Each has its version, time, operation and paramine record; ``record`` is
    ``None`` for commits paramine did not make (compaction, vacuum, an
    engine's own write). ``table`` must be opened at its latest version:
    ``history()`` of a table opened at an older one numbers the newest
    commits from that version down (deltalake 1.6.6).
    """
    for info in table.history():
        if at is not None and info["version"] > at:
            continue
        raw = info.get(COMMIT_KEY)
        yield {
            "version": info["version"],
            "timestamp": info.get("timestamp"),
            "operation": info.get("operation"),
            "record": json.loads(raw) if isinstance(raw, str) else raw,
        }


def latest_record(table: Any, at: int | None = None) -> tuple[int, dict[str, Any]] | None:
    """The version and record of the newest paramine commit of ``table`` (up to ``at``), if any."""
    return next(((c["version"], c["record"]) for c in commits(table, at) if c["record"]), None)


def read_table_pairs(
    root: str, version: int | None = None, storage_options: dict[str, str] | None = None
) -> tuple[pa.Table, Manifest]:
    """Read the pairs of a refreshed table as of ``version`` (the latest by default).

    Returns:
        The pairs in ``PAIRS_SCHEMA`` and the manifest of the newest paramine
        commit at or before that version.

    Raises:
        DatasetError: No table, no such version, or no paramine commit.
    """
    table = open_table(root, version, storage_options)
    log = open_table(root, storage_options=storage_options) if version is not None else table
    found = latest_record(log, at=table.version())
    if found is None:
        raise DatasetError(f"{root}: no paramine commit at or before version {table.version()}")
    rows = pa.table(table.to_pyarrow_table())
    return rows.select(PAIRS_SCHEMA.names).cast(PAIRS_SCHEMA), Manifest(**found[1]["manifest"])
