"""benchmarks/lib/process_tree.py: a measured child, its bytecode and its figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.lib.process_tree import NO_BYTECODE, child_env, run_sampled


def test_a_child_may_write_bytecode_whatever_this_environment_says() -> None:
    assert NO_BYTECODE not in child_env({NO_BYTECODE: "1", "LANG": "C"})
    assert child_env({NO_BYTECODE: "1", "LANG": "C"})["LANG"] == "C"


@pytest.mark.pipeline  # a process
def test_a_measured_child_writes_bytecode_and_its_tree_is_sampled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(NO_BYTECODE, "1")
    log = tmp_path / "child.log"
    code = "import sys, time; print(sys.dont_write_bytecode); time.sleep(0.6)"
    returncode, wall, sampler = run_sampled([sys.executable, "-c", code], log, timeout=60)
    assert returncode == 0 and wall >= 0.6
    assert log.read_text().split() == ["False"]
    assert sampler.peak_rss_kib > 0 and sampler.peak_processes >= 1 and sampler.timeline
