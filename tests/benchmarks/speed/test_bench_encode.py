"""benchmarks/speed/bench_encode.py with the tiny model: each CPU backend timed, compared, mined."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.speed import bench_encode
from tests.benchmarks.harness import TATOEBA_STEM, run_script

pytestmark = pytest.mark.pipeline

#: The reference, the CPU default (``--backend auto``: OpenVINO fp32) and a quantized
#: export, as ``--variants`` names them; the script prints them in ``CPU_VARIANTS``' order.
FP32 = ["torch-none", "openvino-none"]
INT8 = ["onnx-int8"]
PRINTED = [f"{b}-{q}" for b, q in bench_encode.CPU_VARIANTS if f"{b}-{q}" in FP32 + INT8]


def test_every_cpu_backend_encodes_like_torch_and_mines_the_same_pairs(
    tatoeba_sample: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--model", str(tiny_model_dir), "--corpus", str(tatoeba_sample / TATOEBA_STEM)]
    argv += ["--sentences", "120", "--rounds", "1", "--variants", *FP32, *INT8]
    assert bench_encode.main(argv) == 0
    out = capsys.readouterr().out
    assert f"model: {tiny_model_dir.name}" in out or str(tiny_model_dir) in out
    pairs, _ = bench_encode.read_pairs(60, tatoeba_sample / TATOEBA_STEM)
    assert f"sentences: 120 ({len(pairs)} eng-pol pairs, both sides)" in out
    lines = out.splitlines()
    speed = lines.index(next(line for line in lines if line.startswith("backend   quant")))
    rows = {}
    for line in lines[speed + 1 : speed + 4]:
        backend, quant, rate, ratio, dcos, drift, *_ = line.split()
        rows[f"{backend}-{quant}"] = (float(rate), float(ratio), float(dcos), float(drift))
    assert list(rows) == PRINTED
    assert rows["torch-none"][1:] == (1.0, 0.0, 0.0)  # the reference, against itself
    for variant in FP32:
        assert rows[variant][0] > 0
        # Another runtime, the same weights: cosines equal up to float rounding.
        assert rows[variant][2] < 1e-4 and rows[variant][3] < 1e-4
    for variant in INT8:
        assert rows[variant][0] > 0 and rows[variant][2] < 0.2
    # Mining the sample with each backend: the fp32 ones find torch's pairs exactly.
    mined = lines.index(next(line for line in lines if line.startswith("backend   quant  pairs")))
    found = {}
    for line in lines[mined + 1 : mined + 4]:
        backend, quant, count, identical, seconds = line.split()
        found[f"{backend}-{quant}"] = (int(count), identical, float(seconds))
    assert list(found) == PRINTED
    assert found["torch-none"][0] > 0
    for variant in FP32:
        assert found[variant][:2] == (found["torch-none"][0], "100.00%")


@pytest.mark.gpu
def test_the_gpu_path_is_timed_against_the_default_encode(tatoeba_sample: Path) -> None:
    done = run_script(
        "benchmarks.speed.bench_encode",
        "--device", "cuda", "--corpus", tatoeba_sample / TATOEBA_STEM,
        "--sentences", 200, "--rounds", 1, "--repeat-texts", 2,
    )  # fmt: skip
    assert "handler path bucketed" in done.stdout
    ratio = next(line for line in done.stdout.splitlines() if line.startswith("ratio: "))
    assert float(ratio.split()[1].rstrip("x")) > 0
