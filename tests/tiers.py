"""The fast tier (`make test-fast`, `pytest --fast`): the unit tests, for the inner loop.

`--fast` deselects the tests marked ``pipeline`` (a Beam pipeline or another
process), ``slow``, ``browser`` and ``gpu``, and keeps the tier honest: a test
it runs that starts a Beam pipeline, a subprocess or a multiprocessing worker
(in its fixtures too) fails, naming what it started and the marker it lacks. So a new test that runs
a pipeline without saying so is caught the first time anyone runs the tier,
not by a tier that slowly grows past its budget. `make test` runs everything.
"""

from __future__ import annotations

import multiprocessing.process
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

#: Markers the fast tier leaves out; `pipeline` is the one its guards enforce.
LEFT_OUT = ("pipeline", "slow", "browser", "gpu")

#: Fixtures whose folder ``tests/run_once.built_once`` makes once a run and
#: that take long to make (``heaviest_files_first`` orders their files).
BUILT_ONCE = frozenset({"scale_run"})


class NotAUnitTest(AssertionError):
    """A test in the fast tier started something only the full suite runs."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help=f"run the fast tier only: no test marked {', '.join(LEFT_OUT)}; "
        "a test that starts a Beam pipeline or another process fails",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--fast"):
        heaviest_files_first(items)
        return
    kept, left = [], []
    for item in items:
        (left if any(name in item.keywords for name in LEFT_OUT) else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def heaviest_files_first(items: list[pytest.Item]) -> None:
    """Order the files by tier, heaviest first: ``slow``, then ``pipeline``, then the rest.

    `make test` hands whole files to its two workers in this order
    (``--dist loadfile``), a file to whichever is free: a two-minute file
    handed out last kept one worker busy while the other had nothing left.
    Longest first is the classic rule for finishing together. Within a
    tier, and within a file, the order is the collection's.

    A file that uses a folder built once for the run (``BUILT_ONCE``) after
    an earlier file did goes last: handed out beside the file that builds
    it, it would hold its worker idle at the lock for the whole build (31 s
    for bench_scale's run), and at the end it finds the folder built.
    """

    def tier(item: pytest.Item) -> int:
        return 0 if "slow" in item.keywords else 1 if "pipeline" in item.keywords else 2

    heaviest: dict[str, int] = {}
    for item in items:
        path = str(item.path)
        heaviest[path] = min(heaviest.get(path, 2), tier(item))
    items.sort(key=lambda item: heaviest[str(item.path)])  # stable: the collection's order
    builder: dict[str, str] = {}  # a built-once fixture -> the first file that asks for it
    for item in items:
        for name in BUILT_ONCE.intersection(getattr(item, "fixturenames", ())):
            builder.setdefault(name, str(item.path))
    waiting = {
        str(item.path)
        for item in items
        for name in BUILT_ONCE.intersection(getattr(item, "fixturenames", ()))
        if builder[name] != str(item.path)
    }
    items.sort(key=lambda item: str(item.path) in waiting)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Under --fast, a Beam pipeline or process a test starts (setup to teardown) fails it."""
    if not item.config.getoption("--fast"):
        return (yield)
    import apache_beam

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(apache_beam.Pipeline, "run", _refusal("a Beam pipeline"))
        patch.setattr(subprocess.Popen, "__init__", _refusal("a subprocess"))
        patch.setattr(multiprocessing.process.BaseProcess, "start", _refusal("a process"))
        return (yield)


def _refusal(what: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotAUnitTest(
            f"this test starts {what}, which the fast tier (--fast) does not run: "
            "mark it `pytest.mark.pipeline` (tests/tiers.py)"
        )

    return refuse
