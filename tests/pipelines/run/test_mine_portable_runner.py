"""``paramine mine`` through Beam's portable job service, on SDK workers in other processes.

The path a Flink or Spark cluster takes, with everything on this machine:
``PortableRunner`` with an embedded job server (``--job_endpoint=embed``,
Beam's Python job service; no jar, nothing downloaded) hands the pipeline
proto to SDK harnesses that a ``worker_pool_main`` process starts on request
(``--environment_type=EXTERNAL``), as a cluster's worker pool does. The pairs
must be the ones the in-process FnApiRunner writes (docs/architecture.md,
Determinism).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from paramine.pipelines.run import mine
from paramine.schemas.reader import read_pairs

#: A word of the tiny model's vocabulary per pivot, repeated in its candidates:
#: the random model's vectors then put a pivot nearer its own candidates.
WORDS = ["fox", "dog", "kota", "zdanie", "wieczór", "friend", "today", "quick", "brown", "lazy"]
WORDS += ["english", "polsku"]
PIVOTS = [f"Sentence number {i} is about the {w} {w}." for i, w in enumerate(WORDS)]
VARIANTS = ["kot śpi na dachu", "pada deszcz od rana", "lubię pić gorącą herbatę", "idę do domu"]
#: The default graph (calibrated cut, margin, contest, coherence of the groups
#: of four), with cuts loose enough that the tiny model's meaningless cosines
#: leave pairs to compare (16).
OPTIONS = ["--max-false-accept=0.4", "--group-support=0.6", "--coherence-min-group=4", "--quiet"]


def write_bitext(path: Path) -> Path:
    """Groups of four candidates per pivot, and single pairs for the calibration sample."""
    lines = [f"{p}\t{w} {w} {w} {v}" for w, p in zip(WORDS, PIVOTS, strict=True) for v in VARIANTS]
    lines += [f"Single line {i} alone.\tpojedyncze zdanie {i} tutaj" for i in range(60)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def worker_pool(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A Beam worker pool on a free localhost port: its port, and the file it logs to."""
    port = free_port()
    log = tmp_path / "worker-pool.log"
    # The pool starts each SDK harness as `python` from PATH: this interpreter's.
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    with open(log, "wb") as out:
        pool = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "apache_beam.runners.worker.worker_pool_main",
                f"--service_port={port}",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            # Its own process group: the harnesses it starts go with it.
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert pool.poll() is None, f"the worker pool exited:\n{log.read_text()}"
            with socket.socket() as probe:
                if probe.connect_ex(("localhost", port)) == 0:
                    break
            assert time.monotonic() < deadline, f"no worker pool on port {port}"
            time.sleep(0.2)
        yield port, log
    finally:
        os.killpg(pool.pid, signal.SIGTERM)
        try:
            pool.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(pool.pid, signal.SIGKILL)
            pool.wait()


@pytest.mark.slow
def test_portable_runner_with_external_workers_mines_the_same_pairs(
    tmp_path: Path, tiny_model_dir: Path, worker_pool: tuple[int, Path]
) -> None:
    port, pool_log = worker_pool
    source = write_bitext(tmp_path / "bitext.en-pl.tsv")
    common = [str(source), f"--model={tiny_model_dir}", *OPTIONS]

    local = mine.run([*common, f"--output={tmp_path / 'fnapi'}", "--runner=FnApiRunner"])
    portable = mine.run(
        [
            *common,
            f"--output={tmp_path / 'portable'}",
            "--runner=PortableRunner",
            "--job_endpoint=embed",
            "--environment_type=EXTERNAL",
            f"--environment_config=localhost:{port}",
        ]
    )

    assert local is not None and portable is not None
    # The work ran in the pool's SDK harnesses, not in this process.
    assert "Starting worker with command" in pool_log.read_text()
    assert portable.extra.runner == "PortableRunner"

    expected, _ = read_pairs(str(tmp_path / "fnapi"))
    table, _ = read_pairs(str(tmp_path / "portable"))
    assert expected.num_rows >= len(PIVOTS)  # enough pairs for the comparison to mean something
    rows = {r["pair_id"]: r for r in expected.to_pylist()}
    got = {r["pair_id"]: r for r in table.to_pylist()}
    assert got.keys() == rows.keys()
    for pair_id, row in got.items():
        assert (row["sentence_a"], row["sentence_b"]) == (
            rows[pair_id]["sentence_a"],
            rows[pair_id]["sentence_b"],
        )
        # Bit-equal floats are not promised across processes (docs/architecture.md).
        assert row["score_a"] == pytest.approx(rows[pair_id]["score_a"], abs=1e-5)
    # The same books, stage by stage and reason by reason.
    assert portable.counts == local.counts
    assert portable.threshold["value"] == pytest.approx(local.threshold["value"], abs=1e-5)
