"""Shared fixtures: a tiny offline model, private cache and temporary folders, and the GPU skip."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from hypothesis import settings
from paramine.pipelines.run import beam_memos

from tests.paths import CORPORA, ROOT
from tests.run_once import built_once, run_root

# Beam's TestPipeline is a pipeline, not a test class: keep pytest from collecting it.
TestPipeline.__test__ = False  # type: ignore[attr-defined]
# The pipelines tests build themselves pay Beam's repeated work once, as a run does
# (pipelines/run/beam_memos.py).
beam_memos.install()

# The fast tier: `pytest --fast`, `make test-fast`.
pytest_plugins = ["tests.tiers"]

# Before torch or faiss is imported: on 2-core machines, spinning OpenMP
# threads made tiny-model tests 27x slower (shared/DESIGN.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED_CORPORA = CORPORA

# CI gates merges, so its fuzzing is reproducible: the same examples every run
# (`.ci/run` sets CI). Elsewhere hypothesis explores new random examples; a
# failure it finds there becomes an @example of its test.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def private_paramine_cache(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The run's paramine cache: model exports and copies stay out of the user's.

    Set in the environment, so that CLI subprocesses and Beam's worker
    processes use it too. One for all of the run's xdist workers: the default
    model is materialized once (the cache's builds are atomic between
    processes). (A test of the cache's own logic sets its own.)
    """
    cache = run_root(tmp_path_factory) / "paramine-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PARAMINE_CACHE", str(cache))
        yield


@pytest.fixture(scope="session", autouse=True)
def session_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The session's temporary folder, in pytest's own (which keeps the last three sessions').

    What others leave in TMPDIR goes there, not into the machine's /tmp:
    Beam's ``beam-pipeline-temp*`` folder of each pipeline a test builds and
    never runs, and the progress file and log of a run a test SIGKILLs. Set
    in the environment too, for CLI subprocesses and Beam's workers.
    """
    folder = str(tmp_path_factory.mktemp("tmp"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", folder)
        patch.setattr(tempfile, "tempdir", folder)
        yield


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight sentence-transformers model, built offline once a run."""
    from tests.tiny_model import build_tiny_model

    return built_once(tmp_path_factory, "tiny-model", build_tiny_model)


@pytest.fixture
def tiny_model_copy(tiny_model_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the tiny model, for a test that changes the model's files.

    The session's model is shared by every test: none may change it in place.
    """
    import shutil

    return Path(shutil.copytree(tiny_model_dir, tmp_path / "tiny-model-copy"))


@pytest.fixture(scope="session")
def shared_corpora() -> Path:
    """The real corpora in ../shared/corpora; skips when they are absent."""
    if not SHARED_CORPORA.is_dir():
        pytest.skip(f"{SHARED_CORPORA} is not present")
    return SHARED_CORPORA


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip `gpu` tests, saying why, when no CUDA device is present."""
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="no CUDA device on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


#: The frozen studies' tests: collected only when named (pyproject.toml, norecursedirs).
STUDIES = ROOT / "tests" / "benchmarks" / "studies"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say so where a folder holding the frozen studies' tests was run without them."""
    here = config.invocation_params.dir
    named = [(here / arg.split("::")[0]).resolve() for arg in config.args]
    if any(STUDIES.is_relative_to(path) and path != STUDIES for path in named):
        terminalreporter.write_line(
            "frozen studies' tests not collected (tests/benchmarks/studies/, figures in docs/): "
            "run them with `pytest tests/benchmarks/studies`"
        )


# ----------------------------------------------------------- no network

#: Host names a test may resolve: this machine (Beam's workers talk over loopback).
LOCAL_HOSTS = {None, "", "localhost", "127.0.0.1", "::1", "0.0.0.0", socket.gethostname()}
#: Hosts looked up since the current test's setup began.
NETWORK_ATTEMPTS: list[str] = []
_getaddrinfo = socket.getaddrinfo


def _offline_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    """Resolve local names only; anything else fails as it would offline, and is recorded."""
    name = host.decode() if isinstance(host, bytes) else host
    if name not in LOCAL_HOSTS:
        NETWORK_ATTEMPTS.append(str(name))
        raise socket.gaierror(socket.EAI_NONAME, f"tests run offline: {name} not resolved")
    return _getaddrinfo(host, *args, **kwargs)


# Nothing may download a model, a data set or a binary at run time. A library
# that tries and quietly falls back (as Beam's DirectRunner does with Prism)
# would pass offline, so the attempt itself fails the test.
socket.getaddrinfo = _offline_getaddrinfo


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    NETWORK_ATTEMPTS.clear()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    result = yield
    if NETWORK_ATTEMPTS:
        hosts = sorted(set(NETWORK_ATTEMPTS))
        raise AssertionError(f"{item.nodeid} tried to reach {hosts}: tests run offline")
    return result
