"""``--direct_running_mode multi_processing``: SDK worker subprocesses, one model load each.

The one multi-process run of the suite (its workers import torch and Beam
anew: 25 CPU-s): the progress that the launcher draws from the workers'
counts is checked on it too (``run/progress.py``).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.run import encoder as run_encoder
from paramine.pipelines.run import launch, mine
from paramine.pipelines.run.progress import RunProgress
from paramine.schemas.reader import read_pairs

#: Where each load_model call appends its process id; the worker subprocesses
#: inherit the environment, so they find the file too.
LOAD_LOG_ENV = "PARAMINE_TEST_LOAD_LOG"

PIVOTS = ["Good morning.", "Where is the station?", "I like cats.", "It is raining today."]
VARIANTS = ["kot śpi na dachu", "pada deszcz od rana", "lubię pić gorącą herbatę"]


class CountingHandler(EncoderHandler):
    """The real handler, recording the process id of every model load.

    Defined at module level so that the pickled pipeline can import it in the
    worker subprocesses.
    """

    def load_model(self) -> Any:
        with open(os.environ[LOAD_LOG_ENV], "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
        return super().load_model()


def write_input(path: Path) -> Path:
    lines = [f"{pivot}\t{variant} {i}" for i, pivot in enumerate(PIVOTS) for variant in VARIANTS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_multi_processing_loads_the_model_once_per_worker_and_reports_every_byte_and_pair(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_log = tmp_path / "loads.txt"
    load_log.touch()
    monkeypatch.setenv(LOAD_LOG_ENV, str(load_log))
    monkeypatch.setattr(run_encoder, "EncoderHandler", CountingHandler)
    stream = io.StringIO()
    shown: list[RunProgress] = []

    def to_stream(total_bytes: int, quiet: bool = False, **_: object) -> RunProgress:
        # The run's own progress, drawn where the test can read it (mine passes no stream).
        shown.append(RunProgress(total_bytes, quiet=quiet, stream=stream, log_seconds=1.0))
        return shown[-1]

    monkeypatch.setattr(launch, "RunProgress", to_stream)
    source = write_input(tmp_path / "bitext.tsv")
    manifest = mine.run(
        [
            str(source),
            f"--output={tmp_path / 'out'}",
            f"--model={tiny_model_dir}",
            # A fixed cut: calibration would add a second RunInference (and load).
            "--threshold=-1.0",
            "--num-shards=1",
            "--runner=FnApiRunner",
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
        ]
    )

    pids = [int(line) for line in load_log.read_text().split()]
    # The model was loaded in worker subprocesses, never in this process, and
    # at most once in each: RunInference keeps it in a per-process Shared handle.
    assert pids, "no model was loaded"
    assert os.getpid() not in pids
    assert len(pids) == len(set(pids)) <= 2

    table, read_back = read_pairs(str(tmp_path / "out"))
    assert manifest.rows.pairs == table.num_rows == len(PIVOTS) * 2  # ceil(3/2) per group
    assert read_back.extra.runner == "FnApiRunner"
    _assert_progress_counted_everything(shown, stream.getvalue(), manifest, source)

    # Deterministic across running modes: the same pairs and ids in process,
    # and scores equal up to float rounding (not bit for bit: docs/architecture.md).
    mine.run(
        [
            str(source),
            f"--output={tmp_path / 'in_process'}",
            f"--model={tiny_model_dir}",
            "--threshold=-1.0",
            "--runner=FnApiRunner",
        ]
    )
    single, _ = read_pairs(str(tmp_path / "in_process"))
    by_id = dict(zip(single.column("pair_id").to_pylist(), single.to_pylist(), strict=True))
    multi = dict(zip(table.column("pair_id").to_pylist(), table.to_pylist(), strict=True))
    assert by_id.keys() == multi.keys()
    for pair_id, row in multi.items():
        assert row["sentence_a"] == by_id[pair_id]["sentence_a"]
        assert row["score_a"] == pytest.approx(by_id[pair_id]["score_a"], abs=1e-5)


def _assert_progress_counted_everything(
    shown: list[RunProgress], printed: str, manifest: Any, source: Path
) -> None:
    """The launcher's progress of a multi-process run: every byte and pair the workers read."""
    (progress,) = shown
    assert progress.total_bytes == progress.totals.bytes == source.stat().st_size
    lines = len(PIVOTS) * len(VARIANTS)
    assert progress.totals.pairs == manifest.counts["ReadBitext"]["kept"] == lines
    # The workers' INFO logs went to the run's log, not to the progress stream.
    assert "sdk_worker" not in printed
    # Failure path 6: once reading is done, the line names the stage that
    # runs, with its own count, not a stale "read 100%" and pairs/s.
    for stage in ("ReadBitext", "Prefilter", "PostFilter"):
        assert progress.stages[stage].n == manifest.counts[stage]["kept"], stage
    assert progress.stages["encoding"].n == manifest.counts["encoding"]["texts_encoded"]
    last = printed.splitlines()[-1]
    assert last.startswith(f"paramine: {progress.running.stage}: "), last
    assert " out (" in last and "read 100.0%" in last and "pairs/s" not in last
