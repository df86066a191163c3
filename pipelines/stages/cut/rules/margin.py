"""MarginScore: ratio-margin scores against a fixed background (Artetxe & Schwenk 2019).

A cosine cut treats every sentence alike, but some sentences sit close to
everything (short, generic ones) and some far from everything (loose
translations, rare words). The ratio margin divides a pair's cosine by how
close its two sentences are to their nearest neighbours::

    margin(p, c) = cos(p, c) / ((mean top-k cos(p, B_c) + mean top-k cos(c, B_p)) / 2)

Artetxe & Schwenk take the neighbours from the whole corpus. Here they come
from a FIXED background, the calibration sample (the ``--calibration-sample``
pairs with the smallest stable hash): its candidates ``B_c`` and pivots
``B_p``. A pair's score then depends only on its own vectors and that
sample, never on which pairs share its batch or worker, so the output stays
deterministic. The background is the sample that ``EmbedSample`` encodes once
for the calibration, so it costs no encoding of its own; each scored pair
carries its two vectors out of the encoder into ``MarginScore``, which uses and
drops them in the same step.

Background pairs that share a side with the scored pair are left out of
both neighbourhoods: a background candidate that is another translation of
the pair's pivot (same pivot key) is not a neighbour in the sense of the
margin, it is a true match, and counting it would penalize exactly the
pivots with several translations (the ones paramine mines). The same rule
takes a sample pair's own partner out of its neighbourhood, so a sampled
pair is scored as a pair outside the sample would be (no leakage into the
calibration).

Measured on Tatoeba with 20% of target lines replaced (e5-small, cut at
2% false accepts; docs/thresholds.md): recall 0.879 -> 0.924 on ces-eng
and 0.914 -> 0.946 on eng-pol, precision 0.989 -> 0.996 and 1.000.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from paramine.pipelines.core.groups import pivot_key
from paramine.pipelines.core.text import comparison_key
from paramine.pipelines.stages.cut.rules.cuts import PairScorer, Scoring, sample_rank
from paramine.schemas.cut_record import CutRecord
from paramine.schemas.options import option, parse_fields, parse_positive
from paramine.schemas.records import ScoredPair


@dataclass(frozen=True)
class MarginOptions:
    """The ratio margin's settings: MarginScore's and the calibration's (``MarginScoring``).

    Attributes:
        k: Neighbours averaged per side (``--margin-k``). k = 4, 8 and 16
            gave the same recall on Tatoeba eng-pol and ces-eng (within one
            candidate); 8 passed the least noise on ces-eng.
    """

    k: int = option(
        8,
        "with --score margin: nearest neighbours averaged per side (default: %(default)s)",
        group=None,
        parse=parse_positive,
        flag="--margin-k",
    )

    def __post_init__(self) -> None:
        parse_fields(self)


#: The cut when a run is too small to calibrate: a pair must be at least as
#: close as its sentences' average nearest neighbours.
FALLBACK_MARGIN = 1.0
#: Floor of the margin's denominator: neighbours anti-correlated on average
#: (never seen with a real encoder) must not flip the margin's sign.
_MIN_NEIGHBOUR_COSINE = 1e-6

Keys = tuple[str, str]  # (pivot key, candidate comparison key)


def pair_keys(scored: ScoredPair) -> Keys:
    """The keys under which background pairs count as the same alignment."""
    return pivot_key(scored.pair.pivot), comparison_key(scored.pair.candidate)


@dataclass(frozen=True)
class MarginBackground:
    """The neighbours every pair is compared with, and which of them to leave out.

    Attributes:
        pivots: Unit vectors of the sample's distinct pivots, ``(pivots, dim)``.
        candidates: Unit vectors of the sample's distinct candidates, ``(candidates, dim)``.
        candidates_by_pivot_key: Background candidates aligned to a pivot key.
        candidates_by_candidate_key: Background candidates with a comparison key.
        pivots_by_pivot_key: Background pivots with a pivot key.
        pivots_by_candidate_key: Background pivots aligned to a candidate key.
    """

    pivots: np.ndarray
    candidates: np.ndarray
    candidates_by_pivot_key: dict[str, tuple[int, ...]]
    candidates_by_candidate_key: dict[str, tuple[int, ...]]
    pivots_by_pivot_key: dict[str, tuple[int, ...]]
    pivots_by_candidate_key: dict[str, tuple[int, ...]]

    def excluded(self, keys: Keys) -> tuple[list[int], list[int]]:
        """Background candidates and pivots left out of a pair's neighbourhoods."""
        kp, kc = keys
        candidates = set(self.candidates_by_pivot_key.get(kp, ()))
        candidates.update(self.candidates_by_candidate_key.get(kc, ()))
        pivots = set(self.pivots_by_pivot_key.get(kp, ()))
        pivots.update(self.pivots_by_candidate_key.get(kc, ()))
        return sorted(candidates), sorted(pivots)


def build_background(sample: Sequence[ScoredPair]) -> MarginBackground:
    """Index a sample of scored pairs (carrying vectors) as the margin's background.

    The sample is put in hash order first, so the background (and which
    copy of a text's vector it keeps) does not depend on the order the
    runner delivered the sample in.

    Raises:
        ValueError: A pair carries no vectors, or the sample is empty.
    """
    if not sample:
        raise ValueError("the margin background is empty: there were no scored pairs")
    pivot_index: dict[str, int] = {}
    candidate_index: dict[str, int] = {}
    pivot_vectors: list[np.ndarray] = []
    candidate_vectors: list[np.ndarray] = []
    groups: dict[str, defaultdict[str, set[int]]] = {
        name: defaultdict(set) for name in ("cp", "cc", "pp", "pc")
    }
    for scored in sorted(sample, key=lambda s: sample_rank(s.pair)):
        if scored.pivot_vector is None or scored.candidate_vector is None:
            raise ValueError(
                "the margin background carries no embeddings: score the pairs with "
                "ScorePairs(vectors, keep_vectors=True)"
            )
        if scored.pair.pivot not in pivot_index:
            pivot_index[scored.pair.pivot] = len(pivot_vectors)
            pivot_vectors.append(np.asarray(scored.pivot_vector, dtype="float32"))
        if scored.pair.candidate not in candidate_index:
            candidate_index[scored.pair.candidate] = len(candidate_vectors)
            candidate_vectors.append(np.asarray(scored.candidate_vector, dtype="float32"))
        kp, kc = pair_keys(scored)
        p, c = pivot_index[scored.pair.pivot], candidate_index[scored.pair.candidate]
        groups["cp"][kp].add(c)
        groups["cc"][kc].add(c)
        groups["pp"][kp].add(p)
        groups["pc"][kc].add(p)
    frozen = {name: {k: tuple(sorted(v)) for k, v in g.items()} for name, g in groups.items()}
    return MarginBackground(
        pivots=np.stack(pivot_vectors),  # (pivots, dim)
        candidates=np.stack(candidate_vectors),  # (candidates, dim)
        candidates_by_pivot_key=frozen["cp"],
        candidates_by_candidate_key=frozen["cc"],
        pivots_by_pivot_key=frozen["pp"],
        pivots_by_candidate_key=frozen["pc"],
    )


def _top_mean(similarities: np.ndarray, excluded: list[int], k: int) -> float | None:
    """Mean of the ``k`` largest similarities outside ``excluded``; None if none are left."""
    if excluded:
        similarities = np.delete(similarities, excluded)
    n = similarities.size
    if n == 0:
        return None
    k = min(k, n)
    # Sorted before summing: the same k values always add up in the same order.
    top = np.sort(np.partition(similarities, n - k)[n - k :])
    return float(top.mean())


class _Neighbours:
    """The background's similarities to vectors that many pairs share, each sorted once.

    The calibration scores every sampled pivot and candidate against the
    background once per shifted alignment, up to 100 times. For a vector seen
    before, the matrix-vector product and the order of its similarities are
    reused, and the ``k`` largest outside a pair's exclusions are read off
    that order, for all pairs of a shift at once: the same values as
    ``_top_mean`` picks, summed in the same (sorted) order, so the same bits
    (numpy sums a row of a sorted ``(pairs, k)`` array as it sums that row
    alone; tested). On the demo the calibration's margins took 2.2 s pair by
    pair, most of it Python per pair.
    """

    #: Vectors remembered; then forgotten all at once.
    SIZE = 4096

    def __init__(self) -> None:
        self._seen: dict[tuple[int, bytes], tuple[np.ndarray, np.ndarray]] = {}

    def _sorted(self, matrix: np.ndarray, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``matrix @ vector`` and its rows from the most similar down (stable on ties)."""
        key = (id(matrix), vector.tobytes())
        found = self._seen.get(key)
        if found is None:
            if len(self._seen) >= self.SIZE:
                self._seen.clear()
            similarities = matrix @ vector  # (rows,)
            found = similarities, np.argsort(-similarities, kind="stable")
            self._seen[key] = found
        return found

    def top_means(
        self, matrix: np.ndarray, vectors: np.ndarray, excluded: Sequence[list[int]], k: int
    ) -> np.ndarray:
        """``_top_mean(matrix @ vectors[t], excluded[t], k)`` of each row ``t``; NaN for None."""
        n, rows = len(excluded), matrix.shape[0]
        width = min(rows, k + max((len(e) for e in excluded), default=0))
        order = np.empty((n, width), dtype=np.int64)  # (pairs, width): nearest rows first
        nearest = np.empty((n, width), dtype=matrix.dtype)  # (pairs, width): their similarities
        for t in range(n):
            similarities, descending = self._sorted(matrix, vectors[t])
            order[t] = descending[:width]
            nearest[t] = similarities[order[t]]
        skip = np.zeros((n, rows), dtype=bool)  # (pairs, rows): a pair's excluded rows
        lengths = [len(e) for e in excluded]
        skip[np.repeat(np.arange(n), lengths), [i for e in excluded for i in e]] = True
        free = ~np.take_along_axis(skip, order, axis=1)  # (pairs, width)
        chosen = free & (np.cumsum(free, axis=1) <= k)  # the first k free of each row
        means = np.full(n, np.nan)  # (pairs,)
        full = chosen.sum(axis=1) == k
        if full.any():
            top = nearest[full][chosen[full]].reshape(-1, k)  # (full pairs, k), row order kept
            means[full] = np.sort(top, axis=1).mean(axis=1)
        for t in np.flatnonzero(~full).tolist():  # fewer than k rows left: k shrinks, or none
            mean = _top_mean(self._sorted(matrix, vectors[t])[0], excluded[t], k)
            means[t] = np.nan if mean is None else mean
        return means


def margin_scores(
    background: MarginBackground,
    pivots: np.ndarray,
    candidates: np.ndarray,
    keys: Sequence[Keys],
    k: int = MarginOptions.k,
    neighbours: _Neighbours | None = None,
) -> np.ndarray:
    """Ratio margin of each (pivot, candidate) pair against ``background``.

    Row by row on purpose: a matrix-vector product per pair sums in an order
    that depends only on that pair. One matrix product over a batch was
    faster (about 2x) but its rows changed in the last bit with the batch's
    size, so a pair's score, and at the cut its fate, would depend on
    batching. With a 1000-pair background the cost is ~80 us a pair on one
    CPU core, small next to encoding; no kNN index (faiss) is needed at
    this size, and an approximate one would also break determinism.

    Args:
        background: The fixed neighbours, from ``build_background``.
        pivots: Unit vectors, ``(pairs, dim)``.
        candidates: Unit vectors, ``(pairs, dim)``.
        keys: ``(pivot key, candidate comparison key)`` of each pair, for
            the exclusions.
        k: Neighbours averaged per side.
        neighbours: Where vectors scored again (the calibration's shifts)
            find their sorted similarities; the same margins.

    Returns:
        The margins, ``(pairs,)`` float32. A pair with no neighbour left on
        either side (a background made only of its own alignments) scores
        its cosine.
    """
    if k < 1:
        raise ValueError(f"margin k must be positive, got {k}")
    if neighbours is not None:
        return _remembered_margins(background, pivots, candidates, keys, k, neighbours)
    out = np.empty(len(keys), dtype="float32")  # (pairs,)
    for i, pair_key in enumerate(keys):
        p = np.asarray(pivots[i], dtype="float32")  # (dim,)
        c = np.asarray(candidates[i], dtype="float32")  # (dim,)
        cosine = float(np.dot(p, c))
        skip_candidates, skip_pivots = background.excluded(pair_key)
        near_pivot = _top_mean(background.candidates @ p, skip_candidates, k)  # of (cands,)
        near_candidate = _top_mean(background.pivots @ c, skip_pivots, k)  # of (pivots,)
        sides = [m for m in (near_pivot, near_candidate) if m is not None]
        # One side empty: the other side's neighbours alone set the scale.
        denominator = sum(sides) / len(sides) if sides else 1.0
        out[i] = cosine / max(denominator, _MIN_NEIGHBOUR_COSINE)
    return out


def _remembered_margins(
    background: MarginBackground,
    pivots: np.ndarray,
    candidates: np.ndarray,
    keys: Sequence[Keys],
    k: int,
    neighbours: _Neighbours,
) -> np.ndarray:
    """``margin_scores`` from ``neighbours``' sorted similarities, the pairs at once; same bits.

    The cosine stays one ``np.dot`` per pair (a batched product sums in
    another order); the denominator is the same float64 arithmetic on arrays.
    """
    pivots = np.asarray(pivots, dtype="float32")  # (pairs, dim)
    candidates = np.asarray(candidates, dtype="float32")  # (pairs, dim)
    cosines = np.array([float(np.dot(p, c)) for p, c in zip(pivots, candidates, strict=True)])
    skips = [background.excluded(pair_key) for pair_key in keys]
    near_pivot = neighbours.top_means(background.candidates, pivots, [s[0] for s in skips], k)
    near_candidate = neighbours.top_means(background.pivots, candidates, [s[1] for s in skips], k)
    # One side empty: the other side's neighbours alone set the scale; neither: the cosine.
    denominator = np.where(
        np.isnan(near_pivot),
        np.where(np.isnan(near_candidate), 1.0, near_candidate),
        np.where(np.isnan(near_candidate), near_pivot, (near_pivot + near_candidate) / 2),
    )  # (pairs,)
    return (cosines / np.maximum(denominator, _MIN_NEIGHBOUR_COSINE)).astype("float32")


def margin_of(background: MarginBackground, scored: ScoredPair, k: int) -> float:
    """The ratio margin of one scored pair that carries its vectors."""
    if scored.pivot_vector is None or scored.candidate_vector is None:
        raise ValueError(
            f"pair at {scored.pair.shard}:{scored.pair.line} carries no embeddings: margin "
            "scoring needs ScorePairs(vectors, keep_vectors=True)"
        )
    vectors = np.asarray([scored.pivot_vector]), np.asarray([scored.candidate_vector])
    return float(margin_scores(background, *vectors, [pair_keys(scored)], k)[0])


class MarginScoring(Scoring):
    """The ratio margin as CalibrateThreshold's score: same background, same k.

    Args:
        options: The margin's k; ``None``: the defaults.
    """

    name = "margin"
    fallback = FALLBACK_MARGIN

    def __init__(self, options: MarginOptions | None = None) -> None:
        self.k = (options or MarginOptions()).k

    def describe(self, cut: CutRecord) -> CutRecord:
        """``cut`` saying that it applies to the margin, and the margin's k."""
        return replace(cut, score=self.name, margin_k=self.k)

    def scorer(self, sample: Sequence[ScoredPair]) -> PairScorer:
        """Margins against the background made of ``sample`` itself."""
        background = build_background(sample)
        k = self.k
        # The sample's vectors come back in every shift: their neighbours once.
        neighbours = _Neighbours()

        def score(pivots: np.ndarray, candidates: np.ndarray, keys: Sequence[Keys]) -> np.ndarray:
            return margin_scores(background, pivots, candidates, keys, k, neighbours)

        return score
