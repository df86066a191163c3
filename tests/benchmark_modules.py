"""Load a script of ``benchmarks/`` as a module for a test (``benchmarks/`` is not a package)."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextlib.contextmanager
def benchmark_module(name: str) -> Iterator[ModuleType]:
    """``benchmarks/<name>.py`` as the module ``name``, with the scripts beside it importable.

    What loading it added is taken away again afterwards: ``benchmarks/`` on
    ``sys.path`` and the modules of ``benchmarks/`` it imported, itself
    included (dataclasses look their module up in ``sys.modules``).
    """
    path, modules = list(sys.path), set(sys.modules)
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path[:] = path
        for added in set(sys.modules) - modules:
            origin = getattr(sys.modules[added], "__file__", None) or ""
            if Path(origin).parent == BENCHMARKS:
                del sys.modules[added]
