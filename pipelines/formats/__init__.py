"""Readers of bitext formats: each turns one shard into AlignedPair records.

A reader never drops a record silently: whatever it cannot turn into an
``AlignedPair`` it yields as a ``Rejected`` with a reason and a locator.
"""

from __future__ import annotations

from paramine.pipelines.formats.base import (
    FORMATS,
    BitextFormat,
    ReaderOptions,
    ReadResult,
    Repair,
    Shard,
    Span,
    read_shard,
    register_format,
    selectable_formats,
)
from paramine.pipelines.formats.chunks import split_shard
from paramine.pipelines.formats.resolve import read_input_list, resolve_inputs

# Importing a format module registers it.
from paramine.pipelines.formats import czeng, moses, tmx, tsv, unpaired, xces  # noqa: F401  isort: skip

__all__ = [
    "FORMATS",
    "BitextFormat",
    "ReadResult",
    "ReaderOptions",
    "Repair",
    "Shard",
    "Span",
    "read_input_list",
    "read_shard",
    "register_format",
    "resolve_inputs",
    "selectable_formats",
    "split_shard",
]
