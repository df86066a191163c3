"""Two encoders compared line by line: per-line hits as the evaluator decides, the paired gain."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest
from paramine.encoders.evaluation.eval_files import Bitext
from paramine.encoders.evaluation.paired import line_hits, paired_gain

from tests.encoders.datasets import WORDS


def test_the_gain_is_the_mean_per_line_difference_with_its_standard_error() -> None:
    before = np.array([1.0, 1.0, 0.0, 0.0, 0.5, 1.0])
    after = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    found = paired_gain(before, after)
    differences = [0.0, -100.0, 100.0, 100.0, 50.0, 0.0]
    assert found.lines == 6 and found.changed == 4
    assert found.gain == pytest.approx(statistics.mean(differences))
    assert found.standard_error == pytest.approx(statistics.stdev(differences) / 6**0.5)
    assert found.to_record() == {
        "lines": 6,
        "gain": round(found.gain, 4),
        "standard_error": round(found.standard_error, 4),
        "changed": 4,
    }


def test_lines_both_find_or_both_miss_make_no_noise() -> None:
    # 100 lines, one gained: the gain is a point, its standard error a point too.
    before = np.zeros(100)
    after = before.copy()
    after[7] = 1.0
    found = paired_gain(before, after)
    assert found.gain == pytest.approx(1.0) and found.standard_error == pytest.approx(1.0)
    same = paired_gain(after, after)
    assert (same.gain, same.standard_error, same.changed) == (0.0, 0.0, 0)
    assert paired_gain(np.zeros(0), np.zeros(0)).lines == 0
    with pytest.raises(ValueError, match="not the same lines"):
        paired_gain(np.zeros(3), np.zeros(4))


def test_per_line_hits_average_to_the_evaluators_accuracy(tiny_model_dir: Path) -> None:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.evaluation import TranslationEvaluator

    rng = np.random.default_rng(3)
    source = [" ".join(rng.choice(WORDS, 5)) for _ in range(40)]
    # Half the targets are their source with two words swapped, half another line's words.
    target = [
        " ".join(s.split()[1::-1] + s.split()[2:]) if i % 2 else " ".join(rng.choice(WORDS, 5))
        for i, s in enumerate(source)
    ]
    model = SentenceTransformer(str(tiny_model_dir), device="cpu")
    hits = line_hits(model, Bitext("t", source, target))
    scores = TranslationEvaluator(source, target, name="t")(model)
    assert hits.shape == (40,) and set(hits) <= {0.0, 0.5, 1.0}
    expected = (scores["t_src2trg_accuracy"] + scores["t_trg2src_accuracy"]) / 2
    assert hits.mean() == pytest.approx(expected)
    assert 0 < hits.mean() < 1  # the set tells lines apart: some found, some missed
