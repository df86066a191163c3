"""What a test run builds once for all of its pytest-xdist workers.

xdist runs a session fixture once in each worker: a fixture that costs half a
minute (bench_scale's run) or that fills a cache (the default model's
materialization, 15 CPU-s) was paid twice by ``make test``'s two workers.
:func:`built_once` makes such a folder once per run instead, in the folder
the run's workers share (the parent of each worker's base temp), under an
exclusive lock: the first worker builds it, the next finds it built.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temp folder that every worker of this run shares (the session's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """The folder ``name`` of this run, made by ``build(folder)`` in the first worker to ask.

    A build that fails leaves no mark: the next worker to ask builds it again.
    """
    root = run_root(tmp_path_factory)
    folder, done = root / name, root / f"{name}.built"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder
