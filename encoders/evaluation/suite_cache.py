"""A model's suite figures kept in the paramine cache, so that the same model is scored once.

The pl suite takes about 27 minutes a model on a 2-core CPU (docs/training.md),
and the same models come back: ``paramine train --suite`` scores its base on
every run, every seed count and recipe, and ``paramine evaluate BASE TRAINED
--suite`` scores the base again beside each trained model. The figures are a
function of what goes into them, so they are kept under a key made of all of
it and read back when the key is the same:

- the model's files (the content fingerprint ``resolve_model`` gives, as the
  manifest records it; a model without one, a hub id the hub did not pin, is
  never cached);
- how it encodes: backend, quantization, device kind, precision, prefix;
- the suite: each task's name, kind, and every text and label of its three
  splits as read, so a changed or replaced data file scores anew;
- the probes' grid of ``C``, and the code that computes the figures (the
  modules in ``CODE``, by content) with the versions of the libraries in
  ``LIBRARIES``: an upgrade scores anew rather than trusting old figures.

A kept result is the folder ``suites/<suite>-<key>/`` of the cache with
``figures.json`` and the cache's completion marker, built atomically like a
model (``models.cache.atomic_build``): ``paramine models`` lists them,
``paramine models --prune-unused DAYS`` removes those unused for DAYS days,
and ``--no-suite-cache`` neither reads nor writes them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from paramine.encoders.evaluation.suite import Split, Suite
from paramine.encoders.models.cache import (
    COMPLETE_MARKER,
    SUITES_DIR,
    atomic_build,
    cache_root,
    is_complete,
    mark_used,
    remove_folder,
)

log = logging.getLogger(__name__)

FIGURES = "figures.json"
#: The modules whose code turns a model and a suite into figures: reading the
#: splits, encoding them, the probes.
CODE = (
    "paramine.encoders.evaluation.suite",
    "paramine.encoders.evaluation.suite_eval",
    "paramine.encoders.evaluation.probes",
    "paramine.encoders.inference.handler",
    "paramine.encoders.inference.loading",
    "paramine.encoders.inference.export",
    "paramine.encoders.modules.lstm_pooling",
)
#: The libraries the figures run on ("-" where one is not installed).
LIBRARIES = (
    "numpy",
    "scipy",
    "scikit-learn",
    "torch",
    "transformers",
    "sentence-transformers",
    "openvino",
    "onnxruntime",
    "optimum",
    "optimum-intel",
)


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def code_digest() -> str:
    """sha256 over the source of ``CODE`` and the versions of ``LIBRARIES``."""
    digest = hashlib.sha256()
    for name in CODE:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        digest.update(f"{name}\0".encode())
        digest.update(Path(origin).read_bytes() if origin else b"-")
    for distribution in LIBRARIES:
        digest.update(f"{distribution}\0{_version(distribution)}\0".encode())
    return digest.hexdigest()


def _update_split(digest: Any, split: Split) -> None:
    for column in (split.texts, split.second, [repr(label) for label in split.labels]):
        digest.update(f"{len(column)}\0".encode())
        for text in column:
            digest.update(text.encode("utf-8"))
            digest.update(b"\0")


def suite_key(
    revision: str,
    encoding: str,
    suite: Suite,
    data: dict[str, dict[str, Split]],
    grid: Sequence[float],
) -> str:
    """The cache key of a model's figures on a suite's data (32 hex digits).

    Args:
        revision: The model's content fingerprint.
        encoding: How it encodes: backend, quantization, device kind, precision, prefix.
        suite: The tasks, in the table's order.
        data: Each task's splits as read (``read_task``).
        grid: The ``C`` values the probes try.
    """
    digest = hashlib.sha256()
    head = {
        "revision": revision,
        "encoding": encoding,
        "tasks": [(task.name, task.kind) for task in suite.tasks],
        "grid": [float(c) for c in grid],
        "code": code_digest(),
    }
    digest.update(json.dumps(head, sort_keys=True).encode())
    for task in suite.tasks:
        for name in sorted(data[task.name]):
            digest.update(f"\n{task.name}/{name}\n".encode())
            _update_split(digest, data[task.name][name])
    return digest.hexdigest()[:32]


def _folder(suite: Suite, key: str, cache_dir: str | None) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in suite.name)[:40]
    return cache_root(cache_dir) / SUITES_DIR / f"{safe}-{key}"


def cached_figures(
    key: str,
    suite: Suite,
    model: str,
    compute: Callable[[], dict[str, Any]],
    cache_dir: str | None = None,
) -> dict[str, Any]:
    """The figures kept under ``key``, or ``compute()``'s, kept for next time.

    The figures read back carry ``"cached"``: when they were scored.
    ``model`` names the model in the log and in the folder's marker.
    """
    folder = _folder(suite, key, cache_dir)
    if is_complete(folder):
        try:
            figures = json.loads((folder / FIGURES).read_text(encoding="utf-8"))
            marker = json.loads((folder / COMPLETE_MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            log.warning("%s: cached suite figures unreadable (%s); scoring again", folder, error)
            # Moved aside, so that the figures scored now take its place.
            with contextlib.suppress(OSError):
                remove_folder(folder)
        else:
            built = str(marker.get("built_at", "?"))
            log.info("%s: suite %s figures from the cache (scored %s)", model, suite.name, built)
            mark_used(folder)
            return {**figures, "cached": built}
    figures = compute()

    def write(tmp: Path) -> dict[str, Any]:
        (tmp / FIGURES).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        return {"source": f"suite {suite.name} of {model}"}

    try:
        atomic_build(folder, write)
    except OSError as error:  # a read-only cache: the figures stand, only unkept
        log.warning("%s: suite figures not kept in the cache (%s)", folder, error)
    return figures
