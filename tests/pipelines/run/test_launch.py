"""run/launch.py: the one launcher of a graph, shared by ``paramine mine`` and ``paramine refresh``.

End to end it is tested through both commands: a signal in the middle of a
mine (test_mine_failure_paths.py) and of a refresh (refresh/test_table.py), the
progress of a multi-process mine (run/test_progress.py), the collector's
settings (below), the Dataflow graphs (deploy/test_dataflow_graph.py:
a Dataflow job holds no local path, so no progress file of this machine).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import apache_beam as beam
import pytest
from paramine.pipelines.core.accounting import progress_file
from paramine.pipelines.run import launch
from paramine.pipelines.run.deploy import Deployment
from paramine.pipelines.run.launch import GraphRun, StopOnSignals, Stopped
from paramine.pipelines.run.mine import demo_input, run
from paramine.pipelines.settings.running import DEFAULT_RUNNER, RunSettings
from paramine.schemas.reader import read_pairs


def _deployment(runner: str, *beam_args: str) -> Deployment:
    return Deployment(RunSettings(), [f"--runner={runner}", *beam_args], runner)


def test_a_local_runs_pipeline_names_its_progress_file_to_the_stages() -> None:
    with GraphRun(_deployment(DEFAULT_RUNNER), 100, quiet=True) as launch:
        assert progress_file(launch.pipeline) == launch.progress.path
        assert not os.path.exists(launch.progress.path)  # made when the run starts


@pytest.mark.pipeline
def test_a_run_counts_its_reading_and_leaves_no_file(tmp_path: Path) -> None:
    from paramine.pipelines.core.tap import count_reads, tap_for

    data = tmp_path / "in.txt"
    data.write_bytes(b"a\nb\nc\n")
    path = str(data)

    def read(_: object) -> int:
        with tap_for(progress).reading(), open(path, "rb") as raw:
            return len(count_reads(raw).read())

    with GraphRun(_deployment(DEFAULT_RUNNER), data.stat().st_size, quiet=True) as launch:
        progress = progress_file(launch.pipeline)
        _ = launch.pipeline | beam.Create([0]) | beam.Map(read)
        tempdir = launch.pipeline.local_tempdir
        launch.run()
        assert launch.progress.totals.bytes == 6
    assert not os.path.exists(launch.progress.path)
    assert not os.path.exists(tempdir)  # Beam's folder for the pipeline


def test_a_test_pipeline_is_built_into_and_left_to_the_test() -> None:
    given = beam.Pipeline()
    with GraphRun(_deployment(DEFAULT_RUNNER), 0, test_pipeline=given) as launch:
        assert launch.pipeline is given
        assert progress_file(given) == ""


def test_a_signal_raises_stopped_once_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with StopOnSignals() as stop:
        with pytest.raises(Stopped, match="SIGTERM"):
            signal.raise_signal(signal.SIGTERM)
        assert stop.stopped_by == signal.SIGTERM
        signal.raise_signal(signal.SIGTERM)  # while the first is cleaned up: ignored
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_after_hold_a_signal_waits_for_the_run_to_end() -> None:
    with GraphRun(_deployment(DEFAULT_RUNNER), 0, quiet=True) as launch:
        launch.hold()
        signal.raise_signal(signal.SIGINT)
        assert launch.stopped_by is None


# ------------------------------------------------ the collector during a run


def test_inside_what_existed_is_frozen_and_collections_are_rarer() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with launch.bulk_run():
        assert gc.get_threshold() == (launch.YOUNGEST_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > frozen
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


def test_an_error_inside_restores_the_collector() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with pytest.raises(RuntimeError, match="boom"), launch.bulk_run():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


@pytest.mark.pipeline
def test_a_mine_runs_inside_it_and_gives_the_collector_back(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int, int]] = []
    bulk_run = launch.bulk_run

    @contextlib.contextmanager
    def recorded() -> Iterator[None]:
        with bulk_run():
            seen.append(gc.get_threshold())
            yield

    # The launcher of every run (run/launch.py) holds the name it calls.
    monkeypatch.setattr(launch, "bulk_run", recorded)
    before = gc.get_threshold()
    output = tmp_path / "out"
    run([demo_input(), "--model", str(tiny_model_dir), "--output", str(output), "--quiet"])
    assert seen == [(launch.YOUNGEST_THRESHOLD, *before[1:])]
    assert gc.get_threshold() == before
    table, _ = read_pairs(str(output))
    assert table.num_rows > 0
