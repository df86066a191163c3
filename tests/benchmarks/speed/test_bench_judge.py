"""benchmarks/speed/bench_judge.py: both paths timed on real pairs, each line printed."""

from __future__ import annotations

import re

import pytest

from benchmarks.lib.real_sentences import TATOEBA
from benchmarks.speed import bench_judge

pytestmark = pytest.mark.skipif(not TATOEBA.is_dir(), reason="needs ../shared/corpora")


def test_the_script_times_both_paths_with_and_without_the_language_check(capsys) -> None:
    assert bench_judge.main(["--size", "96", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("96 pairs (eng-pol,eng-ces), batches of 1024, CPU-us a pair")
    for label in ("without the language check", "with the language check"):
        assert label in out
    rows = re.findall(r"^  (objects|columns) +((?:[\d.]+ +){2})best +([\d.]+)$", out, re.M)
    assert [path for path, _, _ in rows] == ["objects", "columns"] * 2
    for _, runs, best in rows:
        assert float(best) == min(map(float, runs.split())) > 0


def test_the_pairs_are_drawn_evenly_from_each_set() -> None:
    pairs = bench_judge.real_pairs(["eng-pol", "eng-ces"], 10)
    assert len(pairs) == 10
    assert [lang for *_, lang in pairs] == ["pl"] * 5 + ["cs"] * 5
