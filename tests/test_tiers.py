"""The fast tier's own rules (tests/tiers.py), run by pytest in this process."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

# Its sample tests start a subprocess, which the fast tier itself refuses.
pytestmark = pytest.mark.pipeline

TESTS = """
import subprocess
import multiprocessing

import apache_beam as beam
import pytest


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
