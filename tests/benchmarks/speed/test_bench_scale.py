"""benchmarks/speed/bench_scale.py: 2,000 synthetic pairs with the tiny model, and its inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.harness import SCALE_PAIRS


@pytest.mark.pipeline
def test_one_size_is_mined_and_its_counts_add_up(scale_run: tuple[Path, Path, str]) -> None:
    workdir, figures_path, out = scale_run
    [figures] = json.loads(figures_path.read_text())
    assert figures["returncode"] == 0 and figures["n"] == SCALE_PAIRS
    # The funnel: every stage keeps at most what the one before it kept.
    assert figures["pairs_read"] == SCALE_PAIRS
    assert SCALE_PAIRS > figures["prefilter_kept"] >= figures["group_kept"] > 0
    assert figures["group_kept"] >= figures["threshold_kept"]
    assert 0 <= figures["pairs_written"] <= figures["threshold_kept"]
    # Only texts of pivots with two or more candidates (and the calibration sample).
    encoding = figures["encoding"]
    assert 0 < encoding["texts_per_input_pair"] < 1
    assert encoding["texts_per_input_pair"] == round(encoding["texts_encoded"] / SCALE_PAIRS, 3)
    # The input is the generator's, written once into the workdir with its shape.
    shape_path = workdir / "subtitles-2k-seed0.shape.json"
    assert figures["shape"] == json.loads(shape_path.read_text())
    assert figures["shape"]["pairs"] == SCALE_PAIRS
    # Time and memory were measured: the job, its process tree, each fused stage.
    assert figures["process_seconds"] >= figures["job_seconds"] > 0
    assert figures["cpu_seconds"] > 0
    assert 0 < figures["peak_kib"] < 4 * 2**20
    assert figures["tree_peak_processes"] >= 1 and figures["tree_peak_pss_kib"] > 0
    assert figures["stages"] and all(seconds >= 0 for seconds in figures["stages"].values())
    assert any("Prefilter" in row["stage"] for row in figures["memory_by_stage"])

    lines = out.splitlines()
    assert lines[0].startswith("bench_scale: sizes 2k; model tiny; threshold auto;")
    # --no-warm-up: no untimed run before the size.
    assert not any(line.startswith("warm-up:") for line in lines)
    assert lines[1].lstrip().startswith(f"2k: wall {figures['job_seconds']:8.1f} s".lstrip())
    assert f"pairs read {SCALE_PAIRS:,}" in out
    assert f"pairs written {figures['pairs_written']:,}" in out
    assert "step seconds: " in out and "PSS peaks (MiB" in out


def test_the_real_input_is_a_tatoeba_pair_mined_in_its_languages(tmp_path: Path) -> None:
    from benchmarks.speed.bench_scale import Input

    real, synthetic = Input(), Input("synthetic")
    assert real.kind == "real" and real.languages() == ("en", "pl")
    assert synthetic.languages() == ("en", "pl")
    # The synthetic input keeps the file name the earlier figures used.
    assert synthetic.stem(2000, 0) == "subtitles-2k-seed0"
    assert real.stem(2000, 0) == "real-eng-pol-2k-seed0"
    shape = real.write(tmp_path / "real.tsv", 500, 0)
    rows = (tmp_path / "real.tsv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 500 and all(row.count("\t") == 1 for row in rows)
    assert shape["pair"] == "eng-pol"
    with pytest.raises(ValueError, match="input 'words'"):
        Input("words")
