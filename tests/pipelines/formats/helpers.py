"""Helpers shared by the pipeline tests: write bitext, read shards as ``paramine mine`` does.

And what the readers' tests share: damaged files, the real corpora, fuzzed bytes.
"""

from __future__ import annotations

import collections
import gzip
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import strategies as st
from paramine.pipelines.files.opening import sniff_terminator
from paramine.pipelines.formats import (
    ReaderOptions,
    Repair,
    Shard,
    read_shard,
    resolve_inputs,
    split_shard,
)
from paramine.schemas.records import AlignedPair, Rejected

from tests.paths import CORPORA

MOSES_ZIP = CORPORA / "derived_formats" / "Tatoeba-test.en-pl.txt.zip"
needs_corpora = pytest.mark.skipif(not CORPORA.is_dir(), reason="shared corpora not present")


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


TSV_BYTES = "Hello.\tCześć.\nBye.\tPa.\n".encode()


def tsv(tmp_path: Path, data: bytes, name: str = "bad.tsv") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE tmx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>&b;</seg></tuv></tu></body></tmx>
"""
MALFORMED = b"""<tmx version="1.4"><body>
<tu><tuv xml:lang="en"><seg>Fine.</seg></tuv><tuv xml:lang="pl"><seg>Dobrze.</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>Broken.</tuv></tu>
</body></tmx>
"""


def readable_prefix(cut_gzip: bytes) -> bytes:
    """Every byte a truncated gzip still gives."""
    return zlib.decompressobj(wbits=31).decompress(cut_gzip)


# Bytes that make the format questions interesting: line ends, tabs, BOM,
# NUL, invalid UTF-8, multi-byte characters, and XML syntax.
LINE_BYTES = [b"\n", b"\r", b"\r\n", b"\t", b"\xef\xbb\xbf", b"\x00", b"\xff", b"\xc5\x84", b"a"]
XML_BYTES = [b" ", b"<", b">", b"&", b"<tu>", b"</tu>", b'<tuv xml:lang="en">', b"<seg>", b"</seg>"]
INTERESTING = st.sampled_from([*LINE_BYTES, *XML_BYTES])
BYTES = st.one_of(st.binary(max_size=300), st.lists(INTERESTING, max_size=80).map(b"".join))


def expected_lines(data: bytes) -> int:
    """Lines in an uncompressed file, by the rules the readers document."""
    if not data:
        return 0
    terminator = sniff_terminator(data[: 64 * 1024])
    parts = data.split(terminator)
    return len(parts) - 1 if data.endswith(terminator) else len(parts)


def write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)
