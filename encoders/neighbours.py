"""Nearest neighbours by inner product, with faiss: the one wrapper of it.

The mining graph's calibration and hard-negative checks (``nearest``) and the
trainer's hard negatives (``build_index``, searched as often as they need)
both search through here. Vectors are L2-normalized, so the inner product is
the cosine. ``build_index`` picks the index for the pool:

- up to ``IVF_FROM`` vectors, an exact flat index (``IndexFlatIP``);
- from ``IVF_FROM`` on, an inverted-file index (``IndexIVFFlat``, about
  4 * sqrt(n) lists, ``IVF_PROBES`` of them searched per query), trained on a
  deterministic subsample of the pool: approximate, far cheaper per query;
- either one moved to the GPUs where the installed faiss sees any
  (faiss-gpu on GPU workers); faiss-cpu elsewhere.

faiss uses OpenMP threads: set ``OMP_WAIT_POLICY=PASSIVE`` on small machines
(shared/DESIGN.md), as ``paramine`` itself does before importing it.
"""

from __future__ import annotations

import importlib.util
import math
from typing import Any

import numpy as np
from paramine.schemas.errors import UsageError

#: Pool size from which the search is approximate (IVF) rather than exact.
IVF_FROM = 200_000

#: Inverted lists visited per query by the IVF index.
IVF_PROBES = 32

#: Vectors that train the IVF quantizer at most (every ``len // this``-th).
IVF_TRAIN = 50_000


def require_faiss(flag: str = "this run") -> None:
    """A UsageError saying how to install faiss where it is not (``flag``: what needs it).

    It looks for the module without importing it: settings check it before a run starts.
    """
    if importlib.util.find_spec("faiss") is None:
        raise UsageError(
            f"{flag} searches neighbours with faiss, which is not installed: "
            "pip install 'paramine[faiss]' (faiss-gpu on GPU workers: 'paramine[gpu]')"
        )


def faiss_module(flag: str = "this run") -> Any:
    """faiss, or a UsageError saying how to install it (``flag``: what needs it)."""
    require_faiss(flag)
    import faiss

    return faiss


def build_index(pool: np.ndarray, ivf_from: int = IVF_FROM) -> Any:
    """A faiss inner-product index holding ``pool`` (rows: normalized vectors).

    Args:
        pool: ``(n, dim)`` float32 vectors.
        ivf_from: Pool size from which an IVF index is built instead of a flat one.
    """
    faiss = faiss_module()
    pool = np.ascontiguousarray(pool, dtype="float32")
    n, dim = pool.shape
    if n < ivf_from:
        index = faiss.IndexFlatIP(dim)
    else:
        lists = max(1, int(4 * math.sqrt(n)))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, lists, faiss.METRIC_INNER_PRODUCT)
        # A fixed stride, not a random draw: the same pool trains the same lists.
        step = max(1, n // IVF_TRAIN)
        index.train(pool[::step])
        index.nprobe = min(IVF_PROBES, lists)
    if faiss.get_num_gpus() > 0:
        index = faiss.index_cpu_to_all_gpus(index)
    index.add(pool)
    return index


def nearest(
    pool: np.ndarray, queries: np.ndarray, k: int, ivf_from: int = IVF_FROM
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` rows of ``pool`` with the largest inner product with each query.

    Args:
        pool: ``(n, dim)`` normalized vectors searched.
        queries: ``(m, dim)`` normalized vectors.
        k: Neighbours per query; fewer exist when the pool is smaller (the
            missing ones have index -1 and score -inf).
        ivf_from: Pool size from which the search is approximate (IVF).

    Returns:
        ``(scores, ids)``, both ``(m, k)``, best first: inner products and
        row numbers in ``pool``.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    queries = np.ascontiguousarray(queries, dtype="float32")
    if len(pool) == 0 or len(queries) == 0:
        return (
            np.full((len(queries), k), -np.inf, dtype="float32"),
            np.full((len(queries), k), -1, dtype="int64"),
        )
    scores, ids = build_index(pool, ivf_from).search(queries, k)
    scores[ids < 0] = -np.inf
    return scores, ids
