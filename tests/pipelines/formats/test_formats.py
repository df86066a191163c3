"""Every input format's files opened by their content (compression, zips), and stream reading.

Each format's own tests are beside its module: test_tmx.py, test_xces.py, test_czeng.py ...
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from pathlib import Path

import pytest
from paramine.pipelines.files.opening import sniff_compression

from tests.pipelines.formats.helpers import TSV_BYTES, read_inputs, write_zip


class TestCompression:
    @pytest.mark.parametrize(
        ("name", "data"),
        [
            ("plain.tsv.gz", TSV_BYTES),  # named gzip, really plain text
            ("hidden.tsv", gzip.compress(TSV_BYTES)),  # gzip without the extension
            ("text.tsv.bz2", bz2.compress(TSV_BYTES)),
            ("text.tsv.xz", lzma.compress(TSV_BYTES)),
        ],
        # By name: gzip's header holds the time, and test ids must be the same in every
        # process that collects them (pytest -n).
        ids=["plain.tsv.gz", "hidden.tsv", "text.tsv.bz2", "text.tsv.xz"],
    )
    def test_compression_by_content(self, tmp_path: Path, name: str, data: bytes) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        pairs, rejected, _ = read_inputs([str(path)])
        assert [(p.pivot, p.candidate) for p in pairs] == [("Hello.", "Cześć."), ("Bye.", "Pa.")]
        assert rejected == []

    def test_one_file_zip(self, tmp_path: Path) -> None:
        archive = write_zip(tmp_path / "pairs.tsv.zip", {"pairs.tsv": TSV_BYTES})
        pairs, _, _ = read_inputs([str(archive)])
        assert len(pairs) == 2

    def test_sniff(self) -> None:
        assert sniff_compression(gzip.compress(b"x")) == "gzip"
        assert sniff_compression(b"PK\x03\x04rest") == "zip"
        assert sniff_compression(b"plain") == ""


def test_stream_reading_is_independent_of_io_class() -> None:
    from paramine.pipelines.files.lines import decoded_lines

    lines = list(decoded_lines(io.BytesIO(b"a\r\nb\n"), b"\n", "replace", 20_000))
    assert [(line.number, line.text) for line in lines] == [(1, "a"), (2, "b")]
