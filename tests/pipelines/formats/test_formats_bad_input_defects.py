"""Regression tests for the bad-input defects of issue 11, numbered as there.

2. a truncated TMX/XCES lost every record before the damage;
3. the documented ``zip://X.en::file.zip`` form of a Moses pair failed;
4. ``zip://`` with a missing member gave a traceback naming the wrong file;
7. a truncated gzip on one side of a Moses pair was reported as misalignment;
9. one missing document of an OPUS XCES release stopped the whole run;
10. a stray ``x.en`` with no partner in an input folder aborted the run;
13. a million blank lines gave a million reject rows.
"""

from __future__ import annotations

import gzip
import shutil
import zlib
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.files.opening import CorruptInputError
from paramine.pipelines.files.xml_safety import MalformedXmlError, UnsafeXmlError
from paramine.pipelines.formats import ReaderOptions, resolve_inputs
from paramine.pipelines.formats.moses import MisalignedShardError
from paramine.pipelines.formats.xces import MissingDocumentError
from paramine.pipelines.run.mine import run
from paramine.pipelines.stages.read.read_bitext import ReadBitext
from paramine.pipelines.stages.write.write_dataset import finish_manifest
from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.manifest import LEGACY_STAGES, AccountingError, RunHeader, read_manifest
from paramine.schemas.text_keys import sha256_hex

from tests.paths import CORPORA
from tests.pipelines.formats.helpers import read_all, read_inputs, reasons

TMX_FILE = CORPORA / "derived_formats" / "tatoeba-test.en-pl.tmx"
MOSES_ZIP = CORPORA / "derived_formats" / "Tatoeba-test.en-pl.txt.zip"
XCES_RELEASE = CORPORA / "opus_rf_xces" / "t"
needs_corpora = pytest.mark.skipif(not CORPORA.is_dir(), reason="shared corpora not present")


def units_tmx(n: int) -> bytes:
    # Digests make the text compress poorly, so half a gzip is about half the units.
    units = "".join(
        f'<tu><tuv xml:lang="en"><seg>Sentence {i} {sha256_hex([str(i).encode()])}.</seg></tuv>'
        f'<tuv xml:lang="pl"><seg>Zdanie {i}.</seg></tuv></tu>\n'
        for i in range(1, n + 1)
    )
    return f'<?xml version="1.0"?>\n<tmx version="1.4"><body>\n{units}</body></tmx>\n'.encode()


def readable_prefix(cut_gzip: bytes) -> bytes:
    """Every byte a truncated gzip still gives."""
    return zlib.decompressobj(wbits=31).decompress(cut_gzip)


class TestTruncatedXml:
    """Defect 2: keep every unit before the damage; the damage is one reject."""

    @pytest.mark.parametrize("policy", ["error", "reject"])
    def test_truncated_tmx_gz_keeps_units_before_the_damage(
        self, tmp_path: Path, policy: str
    ) -> None:
        data = gzip.compress(units_tmx(26))
        path = tmp_path / "memory.tmx.gz"
        path.write_bytes(data[: len(data) // 2])
        complete = readable_prefix(data[: len(data) // 2]).count(b"</tu>")
        assert complete >= 5
        pairs, rejected, _ = read_inputs([str(path)], on_malformed_xml=policy)
        assert [p.candidate for p in pairs] == [f"Zdanie {i}." for i in range(1, complete + 1)]
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", complete + 1)]
        assert rejected[0].record.startswith(f"{path}: the file breaks off at line ")

    def test_truncated_plain_tmx_keeps_units_before_the_damage(self, tmp_path: Path) -> None:
        data = units_tmx(26)
        path = tmp_path / "memory.tmx"
        path.write_bytes(data[: len(data) // 2])
        complete = data[: len(data) // 2].count(b"</tu>")
        pairs, rejected, _ = read_inputs([str(path)])
        assert len(pairs) == complete
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", complete + 1)]
        assert "line" in rejected[0].record and "memory.tmx" in rejected[0].record

    @needs_corpora
    def test_real_tmx_gz_cut_in_half(self, tmp_path: Path) -> None:
        data = gzip.compress(TMX_FILE.read_bytes())
        cut = tmp_path / "tatoeba-test.en-pl.tmx.gz"
        cut.write_bytes(data[: len(data) // 2])
        complete = readable_prefix(data[: len(data) // 2]).count(b"</tu>")
        full, _, _ = read_inputs([str(TMX_FILE)])
        pairs, rejected, _ = read_inputs([str(cut)])
        assert len(pairs) == complete > 4000
        assert [(p.pivot, p.candidate) for p in pairs] == [
            (p.pivot, p.candidate) for p in full[:complete]
        ]
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", complete + 1)]

    @needs_corpora
    def test_real_xces_alignment_cut_in_half(self, tmp_path: Path) -> None:
        release = tmp_path / "t"
        shutil.copytree(XCES_RELEASE, release)
        alignment = release / "xml" / "en-fr.xml.gz"
        data = alignment.read_bytes()
        alignment.write_bytes(data[: len(data) // 2])
        links = readable_prefix(data[: len(data) // 2]).count(b"<link ")
        full, full_rejected, _ = read_inputs(
            [str(XCES_RELEASE / "xml" / "en-fr.xml.gz")], "en", "fr"
        )
        pairs, rejected, _ = read_inputs([str(alignment)], "en", "fr")
        # Links whose element is complete are read; one is the damage.
        read = len(pairs) + len(rejected)
        assert links - 1 <= read - 1 <= links
        assert [p.line for p in pairs] == [p.line for p in full if p.line < read]
        assert rejected[-1].reason == "truncated_input"
        assert rejected[-1].line == read
        assert len(full) + len(full_rejected) == 180


@needs_corpora
class TestZipMembers:
    def test_documented_zip_member_form_of_a_moses_pair(self) -> None:
        """Defect 3: ``zip://X.en::file.zip`` finds ``X.pl`` in the same zip."""
        member = f"zip://Tatoeba-test.en-pl.en::{MOSES_ZIP}"
        shards = resolve_inputs([member], "en", "pl")
        assert [(s.format, s.url, s.companion) for s in shards] == [
            ("moses", member, f"zip://Tatoeba-test.en-pl.pl::{MOSES_ZIP}")
        ]
        pairs, rejected, _ = read_all(shards)
        whole, _, _ = read_inputs([str(MOSES_ZIP)])
        assert len(pairs) == 10_099 and rejected == []
        assert [(p.pivot, p.candidate) for p in pairs] == [(p.pivot, p.candidate) for p in whole]

    def test_zip_moses_prefix(self) -> None:
        shards = resolve_inputs([f"zip://Tatoeba-test.en-pl::{MOSES_ZIP}"], "en", "pl")
        assert [s.companion for s in shards] == [f"zip://Tatoeba-test.en-pl.pl::{MOSES_ZIP}"]

    def test_missing_member_names_the_zip_and_the_member(self) -> None:
        """Defect 4: an InputError at resolution, not a traceback about ``X.zip.en``."""
        with pytest.raises(InputError) as caught:
            resolve_inputs([f"zip://Tatoeba-test.en-pl.de::{MOSES_ZIP}"], "en", "pl")
        message = str(caught.value)
        assert f"the zip {MOSES_ZIP} has no member 'Tatoeba-test.en-pl.de'" in message
        assert "Tatoeba-test.en-pl.en, Tatoeba-test.en-pl.pl" in message

    def test_missing_archive_is_named(self, tmp_path: Path) -> None:
        missing = tmp_path / "nowhere.zip"
        with pytest.raises(InputError, match=rf"the archive {missing} does not exist"):
            resolve_inputs([f"zip://c.en::{missing}"], "en", "pl")


class TestTruncatedMosesSide:
    """Defect 7: a cut gzip on one side is truncation, not misalignment."""

    @pytest.mark.parametrize("policy", ["error", "reject_tail"])
    def test_reported_as_truncation_of_that_file(self, tmp_path: Path, policy: str) -> None:
        pivot = b"".join(b"Sentence %d.\n" % i for i in range(1, 3001))
        candidate = gzip.compress(b"".join(b"Zdanie %d.\n" % i for i in range(1, 3001)))
        (tmp_path / "c.en.gz").write_bytes(gzip.compress(pivot))
        cut = tmp_path / "c.pl.gz"
        cut.write_bytes(candidate[: len(candidate) // 2])
        complete = readable_prefix(candidate[: len(candidate) // 2]).count(b"\n")
        pairs, rejected, _ = read_inputs([str(tmp_path / "c.en.gz")], on_length_mismatch=policy)
        assert [p.line for p in pairs] == list(range(1, complete + 1))
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", complete + 1)]
        assert rejected[0].record.startswith(f"{cut}: ")
        assert "c.en.gz has no partner" in rejected[0].record


@needs_corpora
class TestMissingXcesDocument:
    """Defect 9: the links of a missing document are rejected; the rest is read."""

    def test_real_release_without_one_document(self, tmp_path: Path) -> None:
        release = tmp_path / "t"
        shutil.copytree(XCES_RELEASE, release)
        (release / "xml" / "fr" / "1988.xml.gz").unlink()
        full, full_rejected, _ = read_inputs(
            [str(XCES_RELEASE / "xml" / "en-fr.xml.gz")], "en", "fr"
        )
        pairs, rejected, _ = read_inputs([str(release / "xml" / "en-fr.xml.gz")], "en", "fr")
        missing = [r for r in rejected if r.reason == "missing_document"]
        assert {r.record.rsplit("\t", 1)[1] for r in missing} == {"missing document fr/1988.xml.gz"}
        # Every link is accounted for: the 1996 document's links read as before.
        first_1996 = min(r.line for r in missing) + len(missing)
        assert [p.line for p in pairs] == [p.line for p in full if p.line >= first_1996]
        assert len(pairs) + len(rejected) == len(full) + len(full_rejected) == 180
        assert [r.line for r in missing] == list(range(1, len(missing) + 1))

    def test_missing_document_error_is_an_input_error(self) -> None:
        assert issubclass(MissingDocumentError, InputError)


class TestStrayFile:
    """Defect 10: a stray file is skipped with a counted reject, not an abort."""

    def test_stray_file_in_a_folder_is_one_reject(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        (tmp_path / "c.en").write_text("Cat.\nDog.\n")
        (tmp_path / "c.pl").write_text("Kot.\nPies.\n")
        (tmp_path / "x.en").write_text("Lonely.\n")
        pairs, rejected, _ = read_inputs([str(tmp_path)])
        assert [(p.pivot, p.candidate) for p in pairs] == [("Cat.", "Kot."), ("Dog.", "Pies.")]
        assert [(Path(r.shard).name, r.reason) for r in rejected] == [("x.en", "unpaired_file")]
        assert "no " in rejected[0].record and "x.pl" in rejected[0].record
        assert "x.en" in caplog.text

    def test_only_stray_files_is_an_error(self, tmp_path: Path) -> None:
        (tmp_path / "x.en").write_text("Lonely.\n")
        with pytest.raises(InputError, match=r"only Moses files without a partner .*x\.en"):
            resolve_inputs([str(tmp_path)], "en", "pl")

    def test_a_stray_file_named_on_its_own_is_an_error(self, tmp_path: Path) -> None:
        (tmp_path / "x.en").write_text("Lonely.\n")
        with pytest.raises(InputError, match=r"x\.en looks like one side of a Moses pair"):
            resolve_inputs([str(tmp_path / "x.en")], "en", "pl")

    def test_a_target_beside_another_pivot_language_says_which_flag(self, tmp_path: Path) -> None:
        # Tatoeba's x-pol folders: German and Polish, mined with the default --src-lang en.
        (tmp_path / "t.deu").write_text("Katze.\n")
        (tmp_path / "t.pol").write_text("Kot.\n")
        (tmp_path / "t.ids").write_text("1\n")  # not a language: never suggested
        hint = r"\(beside it: \.deu; for another pivot language give --src-lang deu"
        with pytest.raises(InputError, match=r"only Moses files without a partner .*" + hint):
            resolve_inputs([str(tmp_path)], "en", "pl")
        with pytest.raises(InputError, match=r"no .*t\.en file is beside it " + hint):
            resolve_inputs([str(tmp_path / "t.pol")], "en", "pl")
        [shard] = resolve_inputs([str(tmp_path)], "deu", "pl")
        assert (shard.pivot_lang, shard.lang) == ("de", "pl")

    def test_unpaired_is_not_a_user_format(self, tmp_path: Path) -> None:
        (tmp_path / "a.tsv").write_text("a\tb\n")
        with pytest.raises(UsageError, match="unknown"):
            resolve_inputs([str(tmp_path)], "en", "pl", fmt="unpaired")


def blank_lines_tsv(path: Path, blanks: int) -> Path:
    # Blank lines between two good ones, so the rejects are lines 2 .. blanks + 1.
    path.write_bytes(b"Hello.\tCze\xc5\x9b\xc4\x87.\n" + b"\n" * blanks + b"Cat.\tKot.\n")
    return path


class TestRejectCap:
    """Defect 13: every reject counted; the first N rows per (reason, shard) written."""

    @pytest.mark.pipeline
    @pytest.mark.parametrize("split_bytes", [0, 100])
    def test_first_rows_by_line_whatever_the_spans(self, tmp_path: Path, split_bytes: int) -> None:
        path = blank_lines_tsv(tmp_path / "blank.tsv", 2500)
        shards = resolve_inputs([str(path)], "en", "pl")
        options = ReaderOptions(max_rejects_per_reason=10, split_bytes=split_bytes)
        with TestPipeline(runner="FnApiRunner") as pipeline:
            read = pipeline | ReadBitext(shards, options)
            dropped = read.dropped | beam.CombinePerKey(sum)
            assert_that(dropped, equal_to([("blank_line", 2500)]), label="Counted")
            lines = read.rejected | beam.Map(lambda r: (r.reason, r.line))
            assert_that(lines, equal_to([("blank_line", n) for n in range(2, 12)]), label="Written")

    @pytest.mark.pipeline
    def test_zero_keeps_every_row(self, tmp_path: Path) -> None:
        path = blank_lines_tsv(tmp_path / "blank.tsv", 30)
        shards = resolve_inputs([str(path)], "en", "pl")
        with TestPipeline(runner="FnApiRunner") as pipeline:
            read = pipeline | ReadBitext(shards, ReaderOptions(max_rejects_per_reason=0))
            lines = read.rejected | beam.Map(lambda r: r.line)
            assert_that(lines, equal_to(list(range(2, 32))))

    def test_option_is_checked(self) -> None:
        with pytest.raises(UsageError, match=r"^--max-rejects-per-reason -1 is negative"):
            ReaderOptions(max_rejects_per_reason=-1)

    @pytest.mark.pipeline
    def test_mine_counts_every_reject_and_writes_the_cap(
        self, tmp_path: Path, tiny_model_dir: Path
    ) -> None:
        data = tmp_path / "in"
        data.mkdir()
        blank_lines_tsv(data / "blank.tsv", 1500)
        (data / "good.tsv").write_text("Good morning.\tDzień dobry.\nThank you.\tDziękuję.\n")
        out = tmp_path / "out"
        manifest = run(
            [str(data), "--model", str(tiny_model_dir), "--output", str(out), "--threshold", "0.0"]
        )
        assert manifest.accounting_errors() == []
        assert manifest.counts["ReadBitext"]["dropped"] == {"blank_line": 1500}
        assert manifest.rejects.to_json() == {
            "counted": {"blank_line": 1500},
            "written": {"blank_line": 1000},
        }
        assert manifest.rows.rejects == 1000
        rows = pq.read_table(out / "rejects").to_pylist()
        assert sorted(r["line"] for r in rows) == list(range(2, 1002))
        assert read_manifest(str(out)).rejects == manifest.rejects

    def test_rows_check_compares_against_written_rows(self, tmp_path: Path) -> None:
        """A sink that lost reject rows still fails the run."""
        count_rows = [
            *(("ReadBitext", "kept", 0), ("ReadBitext", "blank_line", 5)),
            *((s.name, "kept", 0) for s in LEGACY_STAGES[1:]),
        ]
        base = RunHeader(
            options={}, model={}, inputs=[], stages=[s.to_record() for s in LEGACY_STAGES]
        )
        with pytest.raises(
            AccountingError, match="3 reject rows were written but rejects/ holds 0"
        ):
            finish_manifest(
                str(tmp_path), base, count_rows, [], [], {}, written_rejects={"blank_line": 3}
            )
        with pytest.raises(
            AccountingError, match="7 blank_line rejects written but read counted 5"
        ):
            finish_manifest(
                str(tmp_path), base, count_rows, [], [], {}, written_rejects={"blank_line": 7}
            )


def test_format_errors_are_input_errors() -> None:
    for error in (
        MisalignedShardError,
        CorruptInputError,
        MissingDocumentError,
        MalformedXmlError,
        UnsafeXmlError,
    ):
        assert issubclass(error, InputError) and issubclass(error, ValueError)


def test_unsafe_xml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "evil.tmx"
    path.write_bytes(
        b'<?xml version="1.0"?>\n<!DOCTYPE tmx [\n<!ENTITY a "aaaa">]>\n<tmx version="1.4"/>\n'
    )
    with pytest.raises(UnsafeXmlError, match=rf"{path}: refused XML at line 3"):
        read_inputs([str(path)])
    _, rejected, _ = read_inputs([str(path)], on_malformed_xml="reject")
    assert reasons(rejected) == {"unsafe_xml": 1}


def test_a_file_gone_after_resolution_is_named(tmp_path: Path) -> None:
    """Read in a worker, a vanished shard says which file, not a bare OSError."""
    path = tmp_path / "gone.tsv"
    path.write_text("a\tb\n")
    shards = resolve_inputs([str(path)], "en", "pl")
    path.unlink()
    with pytest.raises(InputError, match=rf"{path}: cannot read {path}: No such file"):
        read_all(shards)
