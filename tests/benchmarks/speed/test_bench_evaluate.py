"""benchmarks/speed/bench_evaluate.py on two tasks of the Polish suite, a few hundred rows each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.harness import run_script

pytestmark = pytest.mark.pipeline

#: The files of the two tasks (PPC: pair classification; CDSC-R: relatedness) and
#: the rows kept of each, header included.
FILES = {
    "PPC/train.txt": 241,
    "PPC/dev.txt": 81,
    "PPC/test.txt": 81,
    "CDS/CDS_train.txt": 241,
    "CDS/CDS_trial.txt": 81,
    "CDS/CDS_test_annotated.txt": 81,
}


def write_suite_sample(corpora: Path, root: Path) -> Path:
    """The first rows of each file of PPC and CDSC-R, under the folders the suite names."""
    for name, rows in FILES.items():
        lines = (corpora / "polish_sentence_evaluation" / name).read_text(encoding="utf-8")
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("".join(lines.splitlines(True)[:rows]), encoding="utf-8")
    return root


def test_a_model_and_random_vectors_each_run_in_a_process_of_their_own(
    tiny_model_dir: Path, shared_corpora: Path, tmp_path: Path
) -> None:
    data = write_suite_sample(shared_corpora, tmp_path / "suite")
    runs_path = tmp_path / "runs.json"
    done = run_script(
        "benchmarks.speed.bench_evaluate",
        tiny_model_dir, "--random", 16, "--tasks", "PPC", "CDSC-R",
        "--backend", "torch", "--suite-data", data, "--json", runs_path,
    )  # fmt: skip
    runs = json.loads(runs_path.read_text(encoding="utf-8"))
    assert [run["model"] for run in runs] == [str(tiny_model_dir), "random-16"]
    assert [run["backend"] for run in runs] == ["torch", "-"]
    for run in runs:
        assert set(run["result"]["tasks"]) == set(run["details"]) == {"PPC", "CDSC-R"}
        assert 0 <= run["result"]["tasks"]["PPC"] <= 100  # accuracy, %
        assert -100 <= run["result"]["tasks"]["CDSC-R"] <= 100  # Spearman x100
        # Each task encodes its distinct sentences: at most two a row of 400.
        assert all(0 < d["encoded"] <= 2 * 400 for d in run["details"].values())
        assert run["wall_s"] >= run["load_model_s"] > 0 and run["peak_rss_mib"] > 0
    out = done.stdout
    # The cost table: a row per model, then the suite's table with both.
    assert [line.split()[0] for line in out.splitlines()[1:3]] == [str(tiny_model_dir), "random-16"]
    assert "PPC" in out and "CDSC-R" in out
    # The null model's check: each task beside its chance level, with a verdict.
    random_run = runs[1]
    check = out[out.index("random-16: figure vs chance") :].splitlines()
    for name in ("PPC", "CDSC-R"):
        [line] = [line for line in check if line.split()[:1] == [name]]
        figure = float(line.split()[1])
        assert figure == pytest.approx(random_run["result"]["tasks"][name], abs=0.006)
        assert line.split()[-1] in ("ok", "FAIL")
    assert check[-1].strip().endswith("of Spearman 0")
