"""benchmarks/speed/gpu_check.sh --dry-run: the GPU session's one prepared script, on the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT


@pytest.mark.slow
def test_the_gpu_check_runs_every_step_dry(tmp_path: Path, tiny_model_dir: Path) -> None:
    env = {**os.environ, "PYTHON": sys.executable, "MODEL": str(tiny_model_dir)}
    done = subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "speed" / "gpu_check.sh"), "--dry-run", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads((tmp_path / "throughput.json").read_text())
    assert figures["device"] == "cpu (dry run)"
    assert set(figures["texts_per_s"]) == {"handler cpu fp32", "encode cpu", "handler cpu openvino"}
    assert all(rate > 0 for rate in figures["texts_per_s"].values())
    for recipe in ("paper", "small", "adapt"):
        training = json.loads((tmp_path / f"train-{recipe}" / "paramine_training.json").read_text())
        assert training["training"]["global_step"] == 2
        assert f"  {recipe:6s} 2 steps, " in done.stdout
    assert "== done in " in done.stdout
