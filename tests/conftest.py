"""Shared fixtures: a tiny offline model, and the GPU skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from hypothesis import settings

# Beam's TestPipeline is a pipeline, not a test class: keep pytest from collecting it.
TestPipeline.__test__ = False  # type: ignore[attr-defined]

# Before torch or faiss is imported: on 2-core machines, spinning OpenMP
# threads made tiny-model tests 27x slower (shared/DESIGN.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED_CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"

# CI gates merges, so its fuzzing is reproducible: the same examples every run
# (`.ci/run` sets CI). Elsewhere hypothesis explores new random examples; a
# failure it finds there becomes an @example of its test.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight sentence-transformers model, built offline once."""
    from tests.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


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
