"""The collector's settings during a run (``run.collector.bulk_run``), and after it."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from paramine.pipelines.run import collector, launch
from paramine.pipelines.run.mine import demo_input, run
from paramine.schemas.reader import read_pairs


def test_inside_what_existed_is_frozen_and_collections_are_rarer() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with collector.bulk_run():
        assert gc.get_threshold() == (collector.YOUNGEST_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > frozen
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


def test_an_error_inside_restores_the_collector() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with pytest.raises(RuntimeError, match="boom"), collector.bulk_run():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


def test_a_mine_runs_inside_it_and_gives_the_collector_back(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int, int]] = []
    bulk_run = collector.bulk_run

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
    assert seen == [(collector.YOUNGEST_THRESHOLD, *before[1:])]
    assert gc.get_threshold() == before
    table, _ = read_pairs(str(output))
    assert table.num_rows > 0
