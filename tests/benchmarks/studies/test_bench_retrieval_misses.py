"""benchmarks/studies/bench_retrieval_misses.py: the misses behind paramine evaluate's figure."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.encoders.evaluation.eval_files import held_out_bitexts
from paramine.encoders.evaluation.evaluate import bitext_task, evaluate_model
from paramine.encoders.modules.lstm_pooling import load_encoder

from benchmarks.studies import bench_retrieval_misses
from tests.benchmarks.harness import markdown_rows
from tests.paths import TATOEBA


def test_the_misses_add_up_to_the_figure_evaluate_prints(
    shared_corpora: Path,
    tiny_model_dir: Path,
    tiny_model_copy: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stem = TATOEBA / "small" / "eng-kab" / "tatoeba-test-v2021-08-07"
    paths = [f"{stem}.eng", f"{stem}.kab"]
    argv = [str(tiny_model_dir), str(tiny_model_copy), "--held-out", *paths, "--samples", "3"]
    assert bench_retrieval_misses.main(argv) == 0
    out = capsys.readouterr().out
    n = int(out.split(" held-out paraphrase pairs")[0])
    first, second = (
        markdown_rows(out, str(model))[0] for model in (tiny_model_dir, tiny_model_copy)
    )
    accuracy, other_way, misses, short, near, fixed, made = map(float, first[1:])

    # The same set and figures as paramine evaluate's held-out paraphrase row.
    [paraphrases] = [s for s in held_out_bitexts(paths, 0.2) if "paraphrases" in s.name]
    assert n == len(paraphrases.source) > 300
    scores = evaluate_model(
        load_encoder(str(tiny_model_dir), device="cpu"), [bitext_task(paraphrases)]
    )
    name = "bitext held-out paraphrases kab"
    assert accuracy == pytest.approx(100 * scores[f"{name} src2trg"], abs=0.005)
    assert other_way == pytest.approx(100 * scores[f"{name} trg2src"], abs=0.005)
    assert misses == round(n * (1 - accuracy / 100)) > 0
    assert 0 <= near <= misses and 0 <= short <= misses
    # Against itself the reference fixes and makes nothing; a copy of it the same.
    assert fixed == made == 0
    assert second[1:] == first[1:]
    # The samples are the reference's misses: a query, its right answer, what it got.
    assert out.count("\n  right ") == 3
