"""Resolve what a user names with ``--model`` into a folder a worker can load."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ResolvedModel:
    """A model ready to load with ``SentenceTransformer(path)``.

    Attributes:
        path: Local folder (or hub id, where the hub is reachable).
        model_id: The canonical name recorded in the manifest.
        revision: Content fingerprint or hub revision, when known.
        prefix: Text prepended to every sentence before encoding
            (``query: `` for e5 models).
    """

    path: str
    model_id: str
    revision: str | None = None
    prefix: str = ""


def resolve_model(spec: str, cache_dir: str | None = None) -> ResolvedModel:
    """Resolve a ``--model`` value: a local sentence-transformers folder for now."""
    if os.path.isdir(spec):
        return ResolvedModel(path=os.path.abspath(spec), model_id=spec)
    raise ValueError(
        f"--model {spec!r} is not a local model folder; give the path of a "
        "sentence-transformers folder"
    )
