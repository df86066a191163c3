"""Helpers shared by the pipeline tests: write bitext, read shards as ``paramine mine`` does."""

from __future__ import annotations

import collections
import gzip
import zipfile
from collections.abc import Iterable
from pathlib import Path

from paramine.pipelines.formats import (
    ReaderOptions,
    Repair,
    Shard,
    read_shard,
    resolve_inputs,
    split_shard,
)
from paramine.schemas.records import AlignedPair, Rejected


def read_all(
    shards: list[Shard], options: ReaderOptions | None = None
) -> tuple[list[AlignedPair], list[Rejected], list[Repair]]:
    """Split and read every shard; return pairs, rejections and repairs."""
    options = options or ReaderOptions()
    pairs: list[AlignedPair] = []
    rejected: list[Rejected] = []
    repairs: list[Repair] = []
    for shard in shards:
        for span in split_shard(shard, options):
            for result in read_shard(span, options):
                if isinstance(result, AlignedPair):
                    pairs.append(result)
                elif isinstance(result, Repair):
                    repairs.append(result)
                else:
                    rejected.append(result)
    return pairs, rejected, repairs


def read_inputs(
    inputs: list[str], src: str = "en", tgt: str = "pl", fmt: str = "auto", **options: object
) -> tuple[list[AlignedPair], list[Rejected], list[Repair]]:
    """Resolve inputs like ``paramine mine`` does, then read them."""
    shards = resolve_inputs(inputs, src, tgt, fmt)
    return read_all(shards, ReaderOptions(**options))  # type: ignore[arg-type]


def reasons(rejected: list[Rejected]) -> dict[str, int]:
    """Count rejections by reason."""
    return dict(collections.Counter(r.reason for r in rejected))


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    """Write a zip whose member names are taken as given (unsafe ones included)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data)
    return path


def write_tsv(path: Path, pairs: Iterable[tuple[str, str]]) -> Path:
    """Write (pivot, candidate) pairs as a two-column TSV file; return its path."""
    path.write_text("".join(f"{p}\t{c}\n" for p, c in pairs), encoding="utf-8")
    return path


def write_moses(folder: Path, pivots: list[str], candidates: list[str], gz: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, lines in (("en", pivots), ("pl", candidates)):
        data = "".join(line + "\n" for line in lines).encode()
        path = folder / f"corpus.en-pl.{lang}{'.gz' if gz else ''}"
        path.write_bytes(gzip.compress(data) if gz else data)
    return folder / "corpus.en-pl"
