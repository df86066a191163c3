"""The fast tier's own rules (tests/tiers.py), run by pytest in this process."""

from __future__ import annotations

import pytest

from tests.tiers import heaviest_files_first

pytest_plugins = ["pytester"]

# Its sample tests start a subprocess, which the fast tier itself refuses.
pytestmark = pytest.mark.pipeline

TESTS = """
import subprocess
import multiprocessing

import apache_beam as beam
import pytest

from tests.tiers import heaviest_files_first


def test_unit():
    assert 1 + 1 == 2


def test_starts_a_subprocess():
    subprocess.run(["true"], check=True)


def test_starts_a_process():
    multiprocessing.get_context("spawn").Process(target=print).start()


def test_runs_a_pipeline():
    with beam.Pipeline() as p:
        p | beam.Create([1])


@pytest.mark.pipeline
def test_marked_pipeline():
    subprocess.run(["true"], check=True)


@pytest.mark.slow
def test_marked_slow():
    pass
"""


def test_the_fast_tier_leaves_marked_tests_out_and_fails_unmarked_processes(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_sample=TESTS)
    result = pytester.runpytest_inprocess("-p", "tests.tiers", "--fast", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=3, deselected=2)
    output = result.stdout.str()
    for what in ("a subprocess", "a process", "a Beam pipeline"):
        assert f"this test starts {what}, which the fast tier (--fast) does not run" in output


def test_without_fast_everything_runs(pytester: pytest.Pytester) -> None:
    # (No process or pipeline of its own here: a spawned interpreter is slow to start.)
    sample = TESTS.replace("def test_starts_a_process", "def _process")
    pytester.makepyfile(test_sample=sample.replace("def test_runs_a_pipeline", "def _pipeline"))
    result = pytester.runpytest_inprocess("-p", "tests.tiers", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


class _Item:
    """What ``heaviest_files_first`` reads of a pytest item."""

    def __init__(self, path: str, marker: str = "", fixtures: tuple[str, ...] = ()) -> None:
        self.path, self.keywords, self.fixturenames = path, {marker} - {""}, fixtures


def test_slow_files_first_and_a_file_that_waits_on_a_built_folder_last() -> None:
    items = [
        _Item("unit.py"),
        _Item("reads_scale.py", "pipeline", ("tmp_path", "scale_run")),
        _Item("pipeline.py", "pipeline"),
        _Item("builds_scale.py", "slow", ("scale_run",)),
        _Item("pipeline.py", "pipeline"),
        _Item("slow.py", "slow"),
    ]
    heaviest_files_first(items)  # type: ignore[arg-type]
    assert [item.path for item in items] == [
        "builds_scale.py", "slow.py", "pipeline.py", "pipeline.py", "unit.py", "reads_scale.py",
    ]  # fmt: skip
