"""Versioned pyarrow schemas of the Parquet files that paramine writes.

A schema is never inferred from the first row: every writer passes one of
these, and every reader checks the version stored in the file's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import pyarrow as pa
from paramine.schemas.records import ParaphrasePair, Rejected, ScoredPair

PAIRS_SCHEMA_VERSION = "paramine.pairs/2"
#: Older pairs schemas that readers still map to ``PAIRS_SCHEMA``: old name -> new name.
#: pairs/1 named the pivot column ``pivot``, which shadows ``DataFrame.pivot`` in
#: pandas and is a keyword in DuckDB (``SELECT pivot ...`` is a syntax error);
#: pairs/2 calls it ``pivot_sentence``, beside ``sentence_a`` and ``sentence_b``.
PAIRS_RENAMED_FROM: dict[str, dict[str, str]] = {"paramine.pairs/1": {"pivot": "pivot_sentence"}}
REJECTS_SCHEMA_VERSION = "paramine.rejects/1"
SCORED_SCHEMA_VERSION = "paramine.scored/1"

#: Largest raw record kept in the rejects output, in characters.
MAX_REJECTED_RECORD_CHARS = 2000

PAIRS_SCHEMA = pa.schema(
    [
        pa.field("pair_id", pa.string(), nullable=False),
        pa.field("sentence_a", pa.string(), nullable=False),
        pa.field("sentence_b", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("pivot_sentence", pa.string(), nullable=False),
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


#: ``--write-scored``: every prefiltered aligned pair with its score and
#: whether it passed the cut: a cleaned, scored parallel corpus.
SCORED_SCHEMA = pa.schema(
    [
        pa.field("pivot", pa.string(), nullable=False),
        pa.field("candidate", pa.string(), nullable=False),
        pa.field("pivot_lang", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("shard", pa.string(), nullable=False),
        pa.field("line", pa.int64(), nullable=False),
        pa.field("score", pa.float32(), nullable=False),
        pa.field("passed", pa.bool_(), nullable=False),
    ],
    metadata={"paramine.schema_version": SCORED_SCHEMA_VERSION},
)


def pair_row(pair: ParaphrasePair) -> dict[str, Any]:
    """Return the Parquet row of a paraphrase pair (its ``pivot`` as ``pivot_sentence``)."""
    row = asdict(pair)
    row["pivot_sentence"] = row.pop("pivot")
    return row


def scored_row(scored: tuple[ScoredPair, bool]) -> dict[str, Any]:
    """Return the Parquet row of a scored aligned pair and whether it passed the cut."""
    pair, passed = scored
    return {**asdict(pair.pair), "score": pair.score, "passed": passed}


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
