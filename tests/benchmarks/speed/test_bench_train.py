"""benchmarks/speed/bench_train.py with the tiny model: a row per setting, figures that agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.speed import bench_train
from tests.benchmarks.harness import markdown_rows, run_script

pytestmark = pytest.mark.pipeline


def test_each_loss_in_each_direction_with_a_hard_negative_is_trained_and_timed(
    tiny_model_dir: Path, shared_corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--base", str(tiny_model_dir), "--batch-size", "8", "--steps", "2", "--warmup", "1"]
    # A hard negative (a third column); each loss once, each direction once: two processes
    # (the grid's product is bench_train's own loop); negatives 0 is the GPU test's row.
    argv += ["--hard-negatives", "1", "--mini-batch-size", "4"]
    # A small LSTM: the figures must agree whatever its size (the paper's 1024 took 10 s more).
    argv += ["--lstm-hidden", "64"]
    rows = {}
    for loss, directions in (("mnrl", "forward"), ("cached", "all")):
        assert bench_train.main([*argv, "--loss", loss, "--loss-directions", directions]) == 0
        out, err = capsys.readouterr()
        assert f"base {tiny_model_dir}, LSTM hidden 64, cached mini-batch 4" in err
        printed = markdown_rows(out, "")[1:]
        rows.update({tuple(cells[:5]): [float(c) for c in cells[5:]] for cells in printed})
    assert list(rows) == [
        ("lstm", "mnrl", "forward", "8", "1"),
        ("lstm", "cached", "all", "8", "1"),
    ]
    for s_per_step, pairs_per_s, cpu_per_step, peak_gb in rows.values():
        assert s_per_step > 0 and cpu_per_step > 0 and 0 < peak_gb < 24
        # pairs/s is the batch over the seconds a step took, both rounded as
        # printed (s/step to 0.01, pairs/s to 0.1): the intervals they allow meet.
        assert 8 / (pairs_per_s + 0.05) - 0.005 <= s_per_step <= 8 / (pairs_per_s - 0.05) + 0.005


@pytest.mark.gpu
def test_a_training_step_runs_on_the_gpu(tiny_model_dir: Path, shared_corpora: Path) -> None:
    done = run_script(
        "benchmarks.speed.bench_train",
        "--base", tiny_model_dir, "--device", "cuda", "--batch-size", "8",
        "--loss", "mnrl", "--hard-negatives", "0", "--steps", "2",
    )  # fmt: skip
    assert "device cuda" in done.stderr
    [row] = markdown_rows(done.stdout, "lstm")
    assert float(row[5]) > 0  # s/step
