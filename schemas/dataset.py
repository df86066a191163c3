"""Versioned pyarrow schemas of the Parquet files that paramine writes.

A schema is never inferred from the first row: every writer passes one of
these, and every reader checks the version stored in the file's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import pyarrow as pa

from schemas.records import ParaphrasePair, Rejected

PAIRS_SCHEMA_VERSION = "paramine.pairs/1"
REJECTS_SCHEMA_VERSION = "paramine.rejects/1"

#: Largest raw record kept in the rejects output, in characters.
MAX_REJECTED_RECORD_CHARS = 2000

PAIRS_SCHEMA = pa.schema(
    [
        pa.field("pair_id", pa.string(), nullable=False),
        pa.field("sentence_a", pa.string(), nullable=False),
        pa.field("sentence_b", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("pivot", pa.string(), nullable=False),
        pa.field("pivot_lang", pa.string(), nullable=False),
        pa.field("score_a", pa.float32(), nullable=False),
        pa.field("score_b", pa.float32(), nullable=False),
        pa.field("group_size", pa.int32(), nullable=False),
        pa.field("corpus", pa.string(), nullable=False),
    ],
    metadata={"paramine.schema_version": PAIRS_SCHEMA_VERSION},
)

REJECTS_SCHEMA = pa.schema(
    [
        pa.field("record", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("stage", pa.string(), nullable=False),
        pa.field("shard", pa.string(), nullable=False),
        pa.field("line", pa.int64(), nullable=False),
    ],
    metadata={"paramine.schema_version": REJECTS_SCHEMA_VERSION},
)


def pair_row(pair: ParaphrasePair) -> dict[str, Any]:
    """Return the Parquet row of a paraphrase pair."""
    return asdict(pair)


def reject_row(rejected: Rejected) -> dict[str, Any]:
    """Return the Parquet row of a rejected record, its text cut to a bound."""
    row = asdict(rejected)
    row["record"] = row["record"][:MAX_REJECTED_RECORD_CHARS]
    return row


def schema_version(schema: pa.Schema) -> str | None:
    """Return the paramine schema version stored in a schema's metadata."""
    metadata: Mapping[bytes, bytes] = schema.metadata or {}
    value = metadata.get(b"paramine.schema_version")
    return value.decode() if value is not None else None
