"""Beam's RunInference API, imported without importing torch.

Beam 2.77's ``apache_beam.ml.inference.base`` imports its ``ModelManager``
at module level, and that module imports torch (about 5 s here) whether or not
a pipeline uses it. paramine never does (its handlers load their own model
and share it through ``share_model_across_processes``), and building a
pipeline graph should not pay for torch. So the first import of ``base`` is
made with a stand-in for the model manager's module whose ``ModelManager`` is
``None``, what ``base`` itself uses when the module cannot be imported.
Nothing else changes (``base`` still finds ``resource`` for its memory
figures); the stand-in is removed right after, so a later explicit import of
the model manager works as usual.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING

_BASE = "apache_beam.ml.inference.base"
_MODEL_MANAGER = "apache_beam.ml.inference.model_manager"


def _import_base() -> ModuleType:
    if _BASE in sys.modules:
        return sys.modules[_BASE]
    stand_in = _MODEL_MANAGER not in sys.modules
    if stand_in:
        placeholder = ModuleType(_MODEL_MANAGER)
        placeholder.ModelManager = None  # type: ignore[attr-defined]
        sys.modules[_MODEL_MANAGER] = placeholder
    try:
        return importlib.import_module(_BASE)
    finally:
        if stand_in:
            del sys.modules[_MODEL_MANAGER]


if TYPE_CHECKING:
    from apache_beam.ml.inference.base import ModelHandler, PredictionResult, RunInference
else:
    _base = _import_base()
    ModelHandler = _base.ModelHandler
    PredictionResult = _base.PredictionResult
    RunInference = _base.RunInference

__all__ = ["ModelHandler", "PredictionResult", "RunInference"]
