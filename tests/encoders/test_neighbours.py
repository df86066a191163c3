"""faiss nearest neighbours: exact where the pool is small, approximate (IVF) where it is large."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("faiss")

from paramine.encoders.neighbours import nearest


def normalized(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype("float32")


def brute_force(pool: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(queries @ pool.T), axis=1, kind="stable")[:, :k]


def test_the_flat_index_finds_the_exact_neighbours() -> None:
    rng = np.random.default_rng(3)
    pool = normalized(rng.normal(size=(500, 24)))
    queries = normalized(rng.normal(size=(40, 24)))
    scores, ids = nearest(pool, queries, 5)
    assert ids.tolist() == brute_force(pool, queries, 5).tolist()
    expected = np.take_along_axis(queries @ pool.T, ids, axis=1)
    assert np.allclose(scores, expected, atol=1e-5)
    assert (np.diff(scores, axis=1) <= 1e-6).all()  # best first


def test_a_pool_smaller_than_k_pads_with_missing_neighbours() -> None:
    pool = normalized(np.eye(3, 4) + 0.1)
    scores, ids = nearest(pool, pool[:1], 5)
    assert sorted(ids[0, :3].tolist()) == [0, 1, 2]
    assert ids[0, 3:].tolist() == [-1, -1]
    assert np.isneginf(scores[0, 3:]).all()
    empty_scores, empty_ids = nearest(pool[:0], pool, 2)
    assert empty_ids.shape == (3, 2) and (empty_ids == -1).all()
    assert np.isneginf(empty_scores).all()
    with pytest.raises(ValueError, match="k must be"):
        nearest(pool, pool, 0)


def test_the_ivf_index_finds_clustered_neighbours() -> None:
    # 40 tight clusters: the approximate search must still find a vector's own
    # cluster-mates, which is what the hard-negative search asks of it.
    rng = np.random.default_rng(5)
    centres = normalized(rng.normal(size=(40, 32)))
    pool = normalized(np.repeat(centres, 50, axis=0) + 0.05 * rng.normal(size=(2000, 32)))
    scores, ids = nearest(pool, pool[::50], 10, ivf_from=1000)
    assert (scores > 0.9).all()  # cluster-mates only
    exact = brute_force(pool, pool[::50], 10)
    found = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, exact, strict=True)])
    assert found >= 0.9
    assert (ids // 50 == np.arange(40)[:, None]).all()  # every neighbour from its own cluster
