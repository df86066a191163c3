"""py3langid's model arrays, read from an uncompressed copy in the paramine cache.

py3langid ships its model as an LZMA-compressed npz (4.6 MB). Reading it
took 0.8 CPU-s here, 0.56 of them in LZMA, in every process that runs the
language check: each `paramine mine`, each worker of a run, each test that
starts one. The first process writes the arrays uncompressed into the cache
(``models/py3langid-<version>-<bytes of the shipped file>/model.npz``, 68 MB),
built like every cached folder (``encoders.models.cache.atomic_build``: whole
or not at all, listed and pruned by ``paramine models``); the next ones read
that copy. The arrays are the package's own, so the probabilities are the
same bits. Where the cache cannot be written or its copy cannot be read, the
model is read from the package, as before.
"""

from __future__ import annotations

import importlib.metadata
import lzma
import shutil
import zipfile
from array import array
from pathlib import Path
from typing import Any

import numpy as np
from paramine.encoders.models.cache import MODELS_DIR, atomic_build, cache_root

#: The file in a cached folder.
MODEL_NAME = "model.npz"
#: What py3langid's loader returns: (nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_row, tk_output).
Model = tuple[Any, Any, list[str], array, array, list[int]]


def shipped_model() -> Path:
    """The model file the installed py3langid ships."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    return Path(MODEL_DIR) / MODEL_FILE


def cached_folder(source: Path | None = None) -> Path:
    """Where the uncompressed copy of ``source`` (the shipped model) lives in the cache."""
    source = source or shipped_model()
    version = importlib.metadata.version("py3langid")
    return cache_root() / MODELS_DIR / f"py3langid-{version}-{source.stat().st_size}"


def load_model() -> Model:
    """py3langid's model arrays: from the cache's copy, made first where there is none."""
    from py3langid import modelio

    source = shipped_model()
    try:
        folder = atomic_build(cached_folder(source), lambda tmp: _decompress(source, tmp))
        return _read(folder / MODEL_NAME)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        # No cache to write, or a copy that cannot be read: the package's file.
        return modelio.load_model(source)


def _decompress(source: Path, folder: Path) -> dict[str, str]:
    with lzma.open(source) as packed, (folder / MODEL_NAME).open("wb") as out:
        shutil.copyfileobj(packed, out, length=1 << 20)
    return {"source": f"py3langid's model ({source.name}), uncompressed"}


def _read(path: Path) -> Model:
    """The arrays of an npz in py3langid's layout, typed as its own loader returns them."""
    with np.load(path, allow_pickle=False) as data:
        return (
            data["ptc"],
            data["pc"],
            data["classes"].tolist(),
            _as_array(data["nextmove"]),
            _as_array(data["nextmove_row"]),
            data["out_feat"].tolist(),
        )


def _as_array(values: np.ndarray) -> array:
    """Unsigned ints as the stdlib array py3langid walks its DFA with (as its loader makes)."""
    typed = array({2: "H", 4: "I", 8: "L"}[values.dtype.itemsize])
    typed.frombytes(np.ascontiguousarray(values).tobytes())
    return typed
