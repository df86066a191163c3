"""benchmarks/speed/bench_mine.py on 300 Tatoeba pairs, the tiny model: both modes, same rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.speed import bench_mine
from tests.benchmarks.harness import key_values

pytestmark = pytest.mark.pipeline


def test_the_default_run_encodes_fewer_texts_than_write_scored_for_the_same_rows(
    tatoeba_sample: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tatoeba_sample / "test.txt"
    # A calibration sample smaller than the input, as in a real run (the default
    # 1,000 pairs would hold all 300 lines, and with them every text). The corpus
    # comes last: argparse takes the flags after -- only with the other positional.
    argv = ["--model", str(tiny_model_dir), "--repeats", "1", str(corpus)]
    assert bench_mine.main([*argv, "--", "--calibration-sample", "100"]) == 0
    out = capsys.readouterr().out
    texts, pairs = bench_mine.distinct_sentences(corpus)
    assert pairs == 300
    assert f"corpus: {corpus} (300 pairs, {len(texts):,} distinct sentences)" in out
    seconds = {
        line[:16].strip(): float(line[16:].split()[0])
        for line in out.splitlines()
        if line.startswith(("raw encode", "--write-scored", "default "))
    }
    assert set(seconds) == {"raw encode", "--write-scored", "default"}
    assert all(s > 0 for s in seconds.values())
    # The default run encodes the texts of pivots with two or more candidates only,
    # plus its calibration sample; --write-scored encodes every distinct text.
    line = next(line for line in out.splitlines() if line.startswith("texts encoded per"))
    default_share = float(line.split("default ")[1].split()[0])
    scored_share = float(line.split("--write-scored ")[1])
    # (Texts equal after normalization are one text to the pipeline.)
    assert 0 < default_share < scored_share <= len(texts) / pairs
    assert "rows identical across all 2 pipeline runs (both modes): True" in out
    assert "pairs written: " in out
    figures = key_values(out.strip().splitlines()[-1])
    assert set(figures) == {"texts_per_pair", "speedup", "ratio"}
    assert figures["texts_per_pair"] == default_share
    assert figures["speedup"] == pytest.approx(
        seconds["--write-scored"] / seconds["default"], rel=0.1
    )
    assert figures["ratio"] > 0
