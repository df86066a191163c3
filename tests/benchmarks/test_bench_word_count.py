"""benchmarks/bench_word_count.py on a sample: both counts agree, and the prefilter's decisions."""

from __future__ import annotations

import re
from pathlib import Path

from tests.benchmarks.harness import run_script


def figure(text: str, label: str) -> str:
    """The first thing after ``label`` on its line of the report."""
    match = re.search(re.escape(label) + r"\s+([\d,.]+)", text)
    assert match, f"no {label!r} in:\n{text}"
    return match.group(1)


def test_the_pattern_counts_as_nltk_does_and_the_prefilter_decides_the_same(
    shared_corpora: Path,
) -> None:
    out = run_script("bench_word_count", "--limit", 400, "--pairs", 300).stdout
    assert "sentences: 400 distinct" in out
    # Every corpus of shared/ was read: Tatoeba, LASER, the Polish suites, OPUS.
    assert {"tatoeba:", "laser:", "pse:", "opus:"} <= {w for w in out.split() if w.endswith(":")}
    equal = int(figure(out, "pattern's count equal").replace(",", ""))
    handed = int(figure(out, "handed to NLTK (pattern unsure)").replace(",", ""))
    different = int(figure(out, "different"))
    assert equal + handed + different == 400
    assert different == 0
    assert equal > 390  # the pattern counts nearly all of them itself
    old, new = (float(figure(out, label)) for label in ("old  NLTK Treebank tokenizer", "new  "))
    assert old > 0 and new > 0
    assert "prefilter per pair, CPU us (300 Tatoeba and LASER pairs, default options)" in out
    assert "decisions that differ: 0" in out
