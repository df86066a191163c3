"""Bad input: every damaged record is rejected with a reason and a locator, never lost.

Most cases call the readers directly (fast); ``TestEndToEnd`` runs the real
pipeline over a mix of damaged files and checks the manifest, the rejects
Parquet and the accounting identity.
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
from paramine.pipelines.files.opening import CorruptInputError
from paramine.pipelines.files.xml_safety import MalformedXmlError, UnsafeXmlError
from paramine.pipelines.formats import ReaderOptions, resolve_inputs
from paramine.pipelines.formats.moses import MisalignedShardError
from paramine.pipelines.run.mine import run
from paramine.pipelines.stages.read.read_bitext import ReadBitext

from tests.pipelines.formats.helpers import read_all, read_inputs, reasons, write_zip


def tsv(tmp_path: Path, data: bytes, name: str = "bad.tsv") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


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


class TestMosesLength:
    @pytest.fixture
    def pair(self, tmp_path: Path) -> Path:
        (tmp_path / "c.en").write_text("one\ntwo\nthree\nfour\n")
        (tmp_path / "c.pl").write_text("jeden\ndwa\n")
        return tmp_path / "c.en"

    @pytest.mark.parametrize("split_bytes", [0, 4])
    def test_error_names_both_files_and_counts(self, pair: Path, split_bytes: int) -> None:
        with pytest.raises(MisalignedShardError, match=r"c\.en has 4 lines but .*c\.pl has 2"):
            read_inputs([str(pair)], split_bytes=split_bytes)

    @pytest.mark.parametrize("split_bytes", [0, 4])
    def test_reject_tail(self, pair: Path, split_bytes: int) -> None:
        pairs, rejected, _ = read_inputs(
            [str(pair)], on_length_mismatch="reject_tail", split_bytes=split_bytes
        )
        assert [(p.pivot, p.candidate) for p in pairs] == [("one", "jeden"), ("two", "dwa")]
        assert [(r.reason, r.line, r.record) for r in rejected] == [
            ("unaligned_tail", 3, "three"),
            ("unaligned_tail", 4, "four"),
        ]


BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE tmx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>&b;</seg></tuv></tu></body></tmx>
"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE tmx [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>&secret;</seg></tuv></tu></body></tmx>
"""
MALFORMED = b"""<tmx version="1.4"><body>
<tu><tuv xml:lang="en"><seg>Fine.</seg></tuv><tuv xml:lang="pl"><seg>Dobrze.</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>Broken.</tuv></tu>
</body></tmx>
"""


class TestXml:
    def test_malformed_xml_names_file_and_line(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, MALFORMED, "broken.tmx")
        with pytest.raises(MalformedXmlError, match=r"broken\.tmx: malformed XML at line 3"):
            read_inputs([url])

    def test_malformed_xml_rejected_under_option(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, MALFORMED, "broken.tmx")
        pairs, rejected, _ = read_inputs([url], on_malformed_xml="reject")
        assert [p.pivot for p in pairs] == ["Fine."]
        assert [(r.reason, r.line) for r in rejected] == [("malformed_xml", 2)]
        assert "line 3" in rejected[0].record

    @pytest.mark.parametrize("data", [BOMB, EXTERNAL], ids=["entity_expansion", "external"])
    def test_entities_are_refused(self, tmp_path: Path, data: bytes) -> None:
        url = tsv(tmp_path, data, "evil.tmx")
        with pytest.raises(UnsafeXmlError, match=r"evil\.tmx: refused XML"):
            read_inputs([url])
        _, rejected, _ = read_inputs([url], on_malformed_xml="reject")
        assert reasons(rejected) == {"unsafe_xml": 1}

    def test_damaged_zip_named_tmx(self, tmp_path: Path) -> None:
        # Zip magic with no archive behind it: an error naming the file, or one
        # corrupt_input rejection (not malformed_xml: the XML was never reached).
        url = tsv(tmp_path, b"PK\x03\x04 truncated", "memory.tmx")
        with pytest.raises(CorruptInputError, match=r"memory\.tmx: not a readable zip archive"):
            read_inputs([url])
        pairs, rejected, _ = read_inputs([url], on_malformed_xml="reject")
        assert pairs == []
        assert [(r.reason, r.line) for r in rejected] == [("corrupt_input", 1)]

    def test_xces_alignment_with_entities_is_refused(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, BOMB.replace(b"tmx", b"cesAlign"), "en-fr.xml")
        with pytest.raises(UnsafeXmlError):
            read_inputs([url], "en", "fr", fmt="xces")


class TestZipMembers:
    def test_unsafe_member_names_are_never_read_or_extracted(self, tmp_path: Path) -> None:
        inner = tmp_path / "inner"
        inner.mkdir()
        archive = write_zip(
            inner / "Evil.en-pl.txt.zip",
            {
                "../Evil.en-pl.en": b"escaped\n",
                "/abs/Evil.en-pl.pl": b"absolute\n",
                "Safe.en-pl.en": b"Cat.\n",
                "Safe.en-pl.pl": b"Kot.\n",
            },
        )
        shards = resolve_inputs([str(archive)], "en", "pl")
        assert [s.corpus for s in shards] == ["Safe.en-pl"]
        pairs, _, _ = read_all(shards)
        assert [(p.pivot, p.candidate) for p in pairs] == [("Cat.", "Kot.")]
        assert sorted(p.name for p in tmp_path.rglob("*")) == ["Evil.en-pl.txt.zip", "inner"]

    def test_only_unsafe_members_is_an_error(self, tmp_path: Path) -> None:
        archive = write_zip(tmp_path / "x.tsv.zip", {"../x.tsv": b"a\tb\n"})
        with pytest.raises(ValueError, match="cannot tell the format"):
            resolve_inputs([str(archive)], "en", "pl")


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
