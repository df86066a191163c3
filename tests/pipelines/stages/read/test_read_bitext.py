"""ReadBitext: shards to AlignedPairs and rejects, with clear errors for bad input."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.formats import ReaderOptions, Shard, resolve_inputs
from paramine.pipelines.formats.moses import MisalignedShardError
from paramine.pipelines.stages.read.read_bitext import ReadBitext

from tests.pipelines.formats.helpers import write_moses


class TestReadBitext:
    @pytest.mark.pipeline
    def test_moses_and_tsv_with_rejects(self, tmp_path: Path) -> None:
        prefix = write_moses(tmp_path / "m", ["Hello.", "Bye."], ["Cześć.", "Pa."], gz=True)
        tsv = tmp_path / "t.tsv"
        tsv.write_text("Yes.\tTak.\nbroken line\neng\tpol\tNo.\tNie.\n", encoding="utf-8")
        shards = resolve_inputs([str(prefix), str(tsv)], "en", "pl")
        assert sorted(s.format for s in shards) == ["moses", "tsv"]
        with TestPipeline(runner="FnApiRunner") as p:
            read = p | ReadBitext(shards, ReaderOptions())
            assert_that(
                read.kept | beam.Map(lambda a: (a.pivot, a.candidate, a.line)),
                equal_to(
                    [
                        ("Hello.", "Cześć.", 1),
                        ("Bye.", "Pa.", 2),
                        ("Yes.", "Tak.", 1),
                        ("No.", "Nie.", 3),
                    ]
                ),
                label="Pairs",
            )
            assert_that(
                read.rejected | beam.Map(lambda r: (r.reason, r.line, r.record)),
                equal_to([("column_count", 2, "broken line")]),
                label="Rejected",
            )

    def test_tatoeba_four_columns_in_either_direction(self, tmp_path: Path) -> None:
        tsv = tmp_path / "test.txt"
        tsv.write_text("eng\tpol\tYes.\tTak.\npol\teng\tNie.\tNo.\ndeu\teng\tJa.\tYes.\n")
        shard = Shard("tsv", str(tsv), "t", "en", "pl")
        from paramine.pipelines.formats import read_shard

        results = list(read_shard(shard, ReaderOptions()))
        assert [(r.pivot, r.candidate) for r in results[:2]] == [("Yes.", "Tak."), ("No.", "Nie.")]
        assert results[2].reason == "language_mismatch"

    def test_misaligned_moses_names_both_files_and_counts(self, tmp_path: Path) -> None:
        prefix = write_moses(tmp_path, ["a", "b", "c"], ["x"])
        shard = resolve_inputs([str(prefix)], "en", "pl")[0]
        from paramine.pipelines.formats import read_shard

        with pytest.raises(MisalignedShardError) as error:
            list(read_shard(shard, ReaderOptions()))
        message = str(error.value)
        assert "corpus.en-pl.en has 3 lines" in message and "corpus.en-pl.pl has 1" in message
        tail = list(read_shard(shard, ReaderOptions(on_length_mismatch="reject_tail")))
        assert [getattr(r, "reason", "pair") for r in tail] == [
            "pair",
            "unaligned_tail",
            "unaligned_tail",
        ]

    def test_unknown_input_is_a_clear_error(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="matches no file"):
            resolve_inputs([str(tmp_path / "nothing")], "en", "pl")
        (tmp_path / "a.en").write_text("x\n")
        with pytest.raises(ValueError, match=r"no .*a\.pl file is beside it"):
            resolve_inputs([str(tmp_path / "a.en")], "en", "pl")
