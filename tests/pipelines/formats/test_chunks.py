"""Tests of pipelines/formats/chunks.py: spans of a file give exactly the records of the whole."""

from __future__ import annotations

from pathlib import Path

from paramine.pipelines.formats import ReaderOptions, Shard, resolve_inputs, split_shard

from tests.pipelines.formats.helpers import TSV_BYTES, read_all


def _lines(n: int) -> list[str]:
    return [f"sentence number {i} " + "x" * (i % 17) for i in range(1, n + 1)]


class TestSplitting:
    """Spans of a file give exactly the records of the whole file."""

    def test_tsv_spans_match_whole_file(self, tmp_path: Path) -> None:
        path = tmp_path / "big.tsv"
        rows = [f"{a}\t{a.upper()}" for a in _lines(500)]
        rows[10] = "only one column"
        path.write_bytes(("\r\n".join(rows) + "\r\n").encode())
        shard = resolve_inputs([str(path)], "en", "pl")[0]
        whole = read_all([shard], ReaderOptions(split_bytes=0))
        split = read_all([shard], ReaderOptions(split_bytes=500))
        assert split == whole
        assert len(whole[0]) == 499 and whole[1][0].line == 11

    def test_moses_spans_match_whole_pair(self, tmp_path: Path) -> None:
        (tmp_path / "c.en").write_text("\n".join(_lines(400)) + "\n", encoding="utf-8")
        (tmp_path / "c.pl").write_text(
            "\n".join(s.upper() + " ż" for s in _lines(400)), encoding="utf-8"
        )
        shard = resolve_inputs([str(tmp_path / "c.en")], "en", "pl")[0]
        whole = read_all([shard], ReaderOptions(split_bytes=0))
        split = read_all([shard], ReaderOptions(split_bytes=700))
        assert split == whole
        assert [p.line for p in split[0]] == list(range(1, 401))
        assert all(p.candidate == p.pivot.upper() + " ż" for p in split[0])

    def test_small_files_are_not_split(self, tmp_path: Path) -> None:
        path = tmp_path / "small.tsv"
        path.write_bytes(TSV_BYTES)
        shard = Shard("tsv", str(path), "small", "en", "pl")
        assert list(split_shard(shard, ReaderOptions())) == [shard]
        spans = list(split_shard(shard, ReaderOptions(split_bytes=5)))
        assert [s.span.first_line for s in spans if s.span] == [1, 2]
