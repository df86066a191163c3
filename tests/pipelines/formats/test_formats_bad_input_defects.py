"""Regression tests for the bad-input defects of issue 11 that no one reader holds.

13. a million blank lines gave a million reject rows (the cap's option is
checked in test_base.py);
and every reader's errors are input errors.

The other defects are tested beside the module that fixed them:
2. a truncated TMX/XCES lost every record before the damage (test_tmx.py, test_xces.py);
3. the documented ``zip://X.en::file.zip`` form of a Moses pair failed (test_moses_pairs.py);
4. ``zip://`` with a missing member gave a traceback naming the wrong file (test_resolve.py);
7. a truncated gzip on one side of a Moses pair was reported as misalignment (test_moses.py);
9. one missing document of an OPUS XCES release stopped the whole run (test_xces.py);
10. a stray ``x.en`` with no partner in an input folder aborted the run (test_unpaired.py,
test_moses_pairs.py, test_resolve.py).
"""

from __future__ import annotations

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
from paramine.schemas.errors import InputError
from paramine.schemas.manifest import LEGACY_STAGES, AccountingError, RunHeader, read_manifest


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
    @pytest.mark.parametrize("blanks", [30, 2500])
    def test_zero_keeps_every_row(self, tmp_path: Path, blanks: int) -> None:
        # 2,500: the reader sends unlimited rejects on a thousand at a time.
        path = blank_lines_tsv(tmp_path / "blank.tsv", blanks)
        shards = resolve_inputs([str(path)], "en", "pl")
        with TestPipeline(runner="FnApiRunner") as pipeline:
            read = pipeline | ReadBitext(shards, ReaderOptions(max_rejects_per_reason=0))
            lines = read.rejected | beam.Map(lambda r: r.line)
            assert_that(lines, equal_to(list(range(2, blanks + 2))))
            dropped = read.dropped | beam.CombinePerKey(sum)
            assert_that(dropped, equal_to([("blank_line", blanks)]), label="Counted")

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
