"""benchmarks/speed/gpu_check.sh --dry-run: the GPU session's one prepared script, on the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT


def _run_check(
    out: Path, model: Path, parts: str | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    env = {**os.environ, "PYTHON": sys.executable, "MODEL": str(model)}
    if parts is not None:
        env["PARTS"] = parts
    done = subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "speed" / "gpu_check.sh"), "--dry-run", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    [line] = [line for line in done.stdout.splitlines() if line.startswith("== figures go to ")]
    return done, Path(line.removeprefix("== figures go to "))


@pytest.mark.slow
def test_the_gpu_check_runs_every_step_dry_and_again(tmp_path: Path, tiny_model_dir: Path) -> None:
    done, run = _run_check(tmp_path, tiny_model_dir)
    assert run.parent == tmp_path
    figures = json.loads((run / "throughput.json").read_text())
    assert figures["device"] == "cpu (dry run)"
    assert set(figures["texts_per_s"]) == {"handler cpu fp32", "encode cpu", "handler cpu torch"}
    assert all(rate > 0 for rate in figures["texts_per_s"].values())
    for recipe in ("paper", "small", "adapt"):
        training = json.loads((run / f"train-{recipe}" / "paramine_training.json").read_text())
        assert training["training"]["global_step"] == 2
        # The dry run trains a small LSTM (--lstm-hidden 32; the GPU run keeps the recipes' own).
        assert training["settings"]["lstm_hidden"] == 32
        assert f"  {recipe:6s} 2 steps, " in done.stdout
    loop = json.loads((run / "adapt" / "adapt.json").read_text())
    assert loop["final_round"] == 1 and loop["rounds"][1]["training"]["steps"] == 2
    assert "paramine adapt: round 1: trained on" in done.stdout
    assert "== done in " in done.stdout
    # A second try (a lent machine allows one or two) writes into a folder of its own, so
    # the training that once met the first try's checkpoints starts clean; PARTS says
    # which parts it measures again (here none: each part was timed above).
    again, second = _run_check(tmp_path, tiny_model_dir, parts="")
    assert second.parent == tmp_path and second != run and "== done in " in again.stdout
    assert list(second.iterdir()) == []
