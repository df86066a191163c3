"""Tests of pipelines/formats/moses.py: sides of different lengths, one side cut short."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from paramine.pipelines.formats.moses import MisalignedShardError

from tests.pipelines.formats.helpers import read_inputs, readable_prefix


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
