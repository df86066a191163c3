"""benchmarks/quality/planted_noise.py: the language and junk noise bench_quality plants."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest
from paramine.pipelines.core.text import comparison_key, normalize

from benchmarks.quality import planted_noise as noise
from tests.paths import ROOT

PIVOTS = ["I live in Kobe.", "The cat is black.", "Where is the station?", "Hello."]
TARGETS = ["Mieszkam w Kobe.", "Kot jest czarny.", "Gdzie jest dworzec?", "Cześć."]


def test_language_noise_takes_the_same_sentence_else_the_most_shared_words():
    donors = [
        noise.Donor("I live in Kobe.", "Bydlím v Kobe.", "cs", "t"),
        noise.Donor("the station is far", "Nádraží je daleko.", "cs", "t"),
        noise.Donor("is", "Je.", "cs", "t"),
        noise.Donor("Hello.", "Cześć.", "cs", "t"),  # the file's own text: no noise
        noise.Donor("Hi there, hello!", "Ahoj!", "cs", "t"),
    ]
    out, replaced, labels = noise.corrupt_language(PIVOTS, TARGETS, 0.99, 1, donors)
    assert replaced == [True] * 4
    assert out[0] == "Bydlím v Kobe."  # equal English side
    assert labels[0] == "cs same"
    assert out[2] == "Nádraží je daleko."  # shares "the", "station", "is"
    assert labels[2] == "cs similar"
    assert out[3] == "Ahoj!"  # "Cześć." is what the file aligns with "Hello."
    # Seeded: the same seed plants the same lines.
    assert noise.corrupt_language(PIVOTS, TARGETS, 0.99, 1, donors)[0] == out


def test_language_donors_read_from_the_corpora_layout(tmp_path):
    tatoeba = tmp_path / noise.TATOEBA_DIR / "ces-eng"
    tatoeba.mkdir(parents=True)
    (tatoeba / f"{noise.TATOEBA_STEM}.eng").write_text("Hi.\nYes.\n", encoding="utf-8")
    (tatoeba / f"{noise.TATOEBA_STEM}.ces").write_text("Ahoj.\nAno.\n", encoding="utf-8")
    laser = tmp_path / noise.LASER_DIR
    laser.mkdir()
    (laser / "tatoeba.rus-eng.eng").write_text("Yes.\n", encoding="utf-8")
    (laser / "tatoeba.rus-eng.rus").write_text("Да.\n", encoding="utf-8")
    donors = noise.load_donors("pl", tmp_path)
    assert [(d.text, d.lang) for d in donors] == [("Ahoj.", "cs"), ("Ano.", "cs"), ("Да.", "ru")]
    with pytest.raises(SystemExit, match="no close languages"):
        noise.load_donors("xx", tmp_path)


def test_junk_noise_deals_each_kind_and_never_keeps_the_line():
    pivots = [f"Tom bought {n} red apples at the market." for n in range(40)]
    targets = [f"Tom kupił {n} czerwonych jabłek na targu." for n in range(40)]
    out, replaced, labels = noise.corrupt_junk(pivots, targets, 0.5, 7, "pl")
    assert sum(replaced) == 20
    assert Counter(label for label in labels if label) == {k: 5 for k in noise.JUNK_KINDS}
    for pivot, target, line, label in zip(pivots, targets, out, labels, strict=True):
        if not label:
            assert line == target
            continue
        assert normalize(line) != normalize(target)
        if label == "english":  # an edited pivot, not the pivot itself
            assert comparison_key(line) != comparison_key(pivot)
        if label == "markup":
            assert target in line and line != target
        if label == "url":
            assert any(mark in line for mark in ("www.", "://", "@"))
    assert noise.corrupt_junk(pivots, targets, 0.5, 7, "pl")[0] == out


@pytest.mark.pipeline
def test_language_noise_does_not_depend_on_string_hashing():
    # Ties among donors were once ordered by set iteration, which PYTHONHASHSEED changes.
    script = (
        "from benchmarks.quality import planted_noise as n\n"
        "donors = [n.Donor(e, f'{e} #{i}', 'cs', 't') for i, e in enumerate("
        "['a cat sat', 'the dog ran', 'a dog sat', 'the cat ran', 'my cat', 'a dog'] * 3)]\n"
        "pivots = ['the cat sat', 'a dog ran', 'my dog', 'the cat', 'a red dog'] * 4\n"
        "print(n.corrupt_language(pivots, ['x'] * 20, 0.9, 3, donors)[0])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outputs) == 1
