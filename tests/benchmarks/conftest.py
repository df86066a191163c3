"""What the benchmarks' tests share: a tiny sample of a real bitext, one bench_scale run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.harness import SCALE_PAIRS, run_script, write_tatoeba_sample
from tests.run_once import built_once


@pytest.fixture(scope="session")
def tatoeba_sample(shared_corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 lines of Tatoeba eng-pol, 200 of them of pivots with several translations.

    The pair's directory, ``.../tatoeba_test_v2021-08-07/eng-pol``, with the
    donors of ``--noise language`` where the benchmarks look for them.
    """
    return write_tatoeba_sample(tmp_path_factory.mktemp("tatoeba"), lines=300)


@pytest.fixture(scope="session")
def scale_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """One bench_scale run of 2,000 synthetic pairs: its workdir, its --json, what it printed.

    Once a run, for every xdist worker (``tests/run_once.py``): bench_floor
    reads the same workdir's input and this run's figures, as a user
    compares the two (``--workdir``, ``--scale-json``).
    """

    def run(workdir: Path) -> None:
        done = run_script(
            "benchmarks.speed.bench_scale",
            *("--sizes", SCALE_PAIRS, "--input", "synthetic"),  # bench_floor reads this input
            # The untimed run writes bytecode for a fresh environment's first size; the
            # suite's has its bytecode (make test), and the run would cost a process more.
            "--no-warm-up",
            *("--workdir", workdir, "--json", workdir / "scale.json"),
        )
        (workdir / "printed.txt").write_text(done.stdout, encoding="utf-8")

    workdir = built_once(tmp_path_factory, "bench-scale", run)
    printed = (workdir / "printed.txt").read_text(encoding="utf-8")
    return workdir, workdir / "scale.json", printed
