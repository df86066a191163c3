"""Bad input: every damaged record is rejected with a reason and a locator, never lost.

Damaged lines, as every line format reads them, are checked through the
readers directly (fast); ``TestEndToEnd`` runs the real pipeline over a mix of
damaged files of several formats and checks the manifest, the rejects Parquet
and the accounting identity. Each reader's own damage (a TMX's malformed XML,
a Moses pair of two lengths ...) is tested beside its module.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.files.lines import raw_lines
from paramine.pipelines.formats import ReaderOptions, resolve_inputs
from paramine.pipelines.run.mine import run
from paramine.pipelines.stages.read.read_bitext import ReadBitext

from tests.pipelines.formats.helpers import MALFORMED, read_inputs, tsv


class TestLines:
    def test_invalid_utf8_replaced_and_counted(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, b"caf\xe9\tkawiarnia\nok\tdobrze\n")
        pairs, rejected, repairs = read_inputs([url])
        assert [p.pivot for p in pairs] == ["caf\ufffd", "ok"]
        assert rejected == []
        assert [(r.reason, r.line) for r in repairs] == [("invalid_utf8_replaced", 1)]

    def test_invalid_utf8_rejected(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, b"caf\xe9\tkawiarnia\nok\tdobrze\n")
        pairs, rejected, repairs = read_inputs([url], invalid_utf8="reject")
        assert [p.pivot for p in pairs] == ["ok"]
        assert [(r.reason, r.line, r.record) for r in rejected] == [
            ("invalid_utf8", 1, "caf\ufffd\tkawiarnia")
        ]
        assert repairs == []

    def test_nul_bytes(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, b"a\x00b\tc\nok\tdobrze\n")
        pairs, rejected, _ = read_inputs([url])
        assert len(pairs) == 1
        assert [(r.reason, r.line, r.record) for r in rejected] == [("nul_byte", 1, "a\\0b\tc")]

    def test_line_longer_than_limit_is_cut_in_memory(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, b"x" * 5000 + b"\ty\nok\tdobrze\n")
        pairs, rejected, _ = read_inputs([url], max_line_chars=100)
        assert [p.line for p in pairs] == [2]
        assert [(r.reason, r.line, len(r.record)) for r in rejected] == [("line_too_long", 1, 100)]
        # The reader never holds more than the limit of an over-long line.
        import io

        raw = list(raw_lines(io.BytesIO(b"y" * 3_000_000 + b"\nz\n"), b"\n", max_bytes=10))
        assert [(r.data, r.too_long) for r in raw] == [(b"y" * 10, True), (b"z", False)]

    def test_crlf_lone_cr_and_cr_only_files(self, tmp_path: Path) -> None:
        crlf = tsv(tmp_path, b"a\tb\r\nc\r d\te\r\n", "crlf.tsv")
        pairs, _, _ = read_inputs([crlf])
        assert [(p.pivot, p.candidate) for p in pairs] == [("a", "b"), ("c  d", "e")]
        cr_only = tsv(tmp_path, b"a\tb\rc\td\r", "mac.tsv")
        pairs, _, _ = read_inputs([cr_only])
        assert [(p.pivot, p.candidate, p.line) for p in pairs] == [("a", "b", 1), ("c", "d", 2)]

    def test_bom(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, b"\xef\xbb\xbfHello\tCze\xc5\x9b\xc4\x87\n")
        pairs, _, _ = read_inputs([url])
        assert pairs[0].pivot == "Hello"

    def test_truncated_gzip_keeps_what_came_before(self, tmp_path: Path) -> None:
        data = gzip.compress(b"".join(b"line %d\tlinia %d\n" % (i, i) for i in range(2000)))
        url = tsv(tmp_path, data[: len(data) // 2], "cut.tsv.gz")
        pairs, rejected, _ = read_inputs([url])
        assert len(pairs) > 100
        assert [p.line for p in pairs] == list(range(1, len(pairs) + 1))
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", len(pairs) + 1)]

    def test_empty_files(self, tmp_path: Path) -> None:
        (tmp_path / "e.en").write_bytes(b"")
        (tmp_path / "e.pl").write_bytes(b"")
        (tmp_path / "e.tmx").write_text('<tmx version="1.4"><body/></tmx>')
        (tmp_path / "e.tsv").write_bytes(b"")
        assert read_inputs([str(tmp_path)]) == ([], [], [])


@pytest.mark.pipeline
def test_repairs_are_counted_by_read_bitext(tmp_path: Path) -> None:
    url = tsv(tmp_path, b"caf\xe9\tkawiarnia\n\xff\tx\nbad\n")
    shards = resolve_inputs([url], "en", "pl")
    with TestPipeline(runner="FnApiRunner") as pipeline:
        read = pipeline | ReadBitext(shards, ReaderOptions())
        assert_that(read.repairs, equal_to([("repairs", "invalid_utf8_replaced", 2)]))
        assert_that(read.dropped, equal_to([("column_count", 1)]), label="Dropped")
        assert_that(read.kept | beam.Map(lambda p: p.line), equal_to([1, 2]), label="KeptLines")


@pytest.mark.pipeline
class TestEndToEnd:
    """The real pipeline over damaged files: counts, rejects Parquet, identity."""

    def test_damaged_inputs_mine_with_every_rejection_recorded(
        self, tmp_path: Path, tiny_model_dir: Path
    ) -> None:
        data = tmp_path / "in"
        data.mkdir()
        lines = [b"Good morning.\tDzie\xc5\x84 dobry.", b"caf\xe9\tkawa", b"nul\x00\tx"]
        lines += [b"y" * 300 + b"\tz", b"one column", b"Thank you.\tDzi\xc4\x99kuj\xc4\x99."]
        (data / "mixed.tsv").write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n")
        good = gzip.compress(b"".join(b"A%d.\tB%d.\n" % (i, i) for i in range(400)))
        (data / "cut.tsv.gz").write_bytes(good[: len(good) // 2])
        (data / "c.en").write_text("Cat.\nDog.\nBird.\n")
        (data / "c.pl").write_text("Kot.\nPies.\n")
        (data / "broken.tmx").write_bytes(MALFORMED)
        out = tmp_path / "out"
        manifest = run(
            [
                str(data),
                "--model",
                str(tiny_model_dir),
                "--output",
                str(out),
                "--threshold",
                "0.0",
                "--invalid-utf8",
                "reject",
                "--max-line-chars",
                "200",
                "--on-length-mismatch",
                "reject_tail",
                "--on-malformed-xml",
                "reject",
            ]
        )
        assert manifest.accounting_errors() == []
        rejects = pq.read_table(out / "rejects").to_pylist()
        found = sorted((Path(r["shard"]).name, r["line"], r["reason"]) for r in rejects)
        truncated = [f for f in found if f[0] == "cut.tsv.gz"]
        assert [f[2] for f in truncated] == ["truncated_input"]
        assert [f for f in found if f[0] != "cut.tsv.gz"] == [
            ("broken.tmx", 2, "malformed_xml"),
            ("c.en", 3, "unaligned_tail"),
            ("mixed.tsv", 2, "invalid_utf8"),
            ("mixed.tsv", 3, "nul_byte"),
            ("mixed.tsv", 4, "line_too_long"),
            ("mixed.tsv", 5, "column_count"),
        ]
        read = manifest.counts["ReadBitext"]
        cut_pairs = truncated[0][1] - 1
        assert read["kept"] == 2 + cut_pairs + 2 + 1  # mixed, cut, moses, tmx
        assert read["dropped"] == {
            "column_count": 1,
            "invalid_utf8": 1,
            "line_too_long": 1,
            "malformed_xml": 1,
            "nul_byte": 1,
            "truncated_input": 1,
            "unaligned_tail": 1,
        }
        assert manifest.rows.rejects == 7
