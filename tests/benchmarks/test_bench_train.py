"""benchmarks/bench_train.py with the tiny model: a row per pooling, figures that agree."""

from __future__ import annotations

from pathlib import Path

import bench_train
import pytest

from tests.benchmarks.harness import markdown_rows, run_script


def test_lstm_and_mean_pooling_each_train_and_are_timed(
    tiny_model_dir: Path, shared_corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--base", str(tiny_model_dir), "--pooling", "lstm", "mean", "--batch-size", "8"]
    assert bench_train.main([*argv, "--steps", "2", "--warmup", "1"]) == 0
    out, err = capsys.readouterr()
    assert f"base {tiny_model_dir}, batch 8, LSTM hidden 1024" in err
    rows = {cells[0]: [float(c) for c in cells[1:]] for cells in markdown_rows(out, "")[1:]}
    assert list(rows) == ["lstm", "mean"]
    for s_per_step, pairs_per_s, cpu_per_step, peak_gb, _ in rows.values():
        assert s_per_step > 0 and cpu_per_step > 0 and 0 < peak_gb < 24
        # pairs/s is the batch over the seconds a step took, both rounded as
        # printed (s/step to 0.01, pairs/s to 0.1): the intervals they allow meet.
        assert 8 / (pairs_per_s + 0.05) - 0.005 <= s_per_step <= 8 / (pairs_per_s - 0.05) + 0.005
    # The paper's LSTM (hidden 1024, about 4.3M weights) on the tiny transformer (0.0M).
    assert rows["lstm"][4] > 4 > rows["mean"][4] >= 0


@pytest.mark.gpu
def test_a_training_step_runs_on_the_gpu(tiny_model_dir: Path, shared_corpora: Path) -> None:
    done = run_script(
        "bench_train", "--base", tiny_model_dir, "--device", "cuda", "--batch-size", "8",
        "--steps", "2",
    )  # fmt: skip
    assert "device cuda" in done.stderr
    [row] = markdown_rows(done.stdout, "lstm")
    assert float(row[2]) > 0
