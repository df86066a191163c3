"""Hard negatives for the training pairs, mined from the dataset's own sentences with faiss.

MNRL's negatives are the batch's other positives, mostly unrelated
sentences. ``--hard-negatives N`` gives each pair N more: the training
sentences nearest to its anchor by the base model's cosine, that the anchor
must still rank below its positive.

A mined pair's pivot group is a set of paraphrases: every candidate of a
pivot translates the same sentence, and a group of four candidates gives the
pairs (a, b) and (c, d), so c is as much a paraphrase of a as b is. The
nearest neighbours of an anchor are its own group's sentences first, and
mining them as negatives would teach the model to push paraphrases apart.
So a negative is never a sentence of the anchor's group (rows sharing the
pivot, by the comparison key: case, punctuation and spacing ignored), nor
equal (by that key) to the anchor or the positive. A neighbour of another
group may still be a paraphrase that mining never grouped; a margin guards
against those, as NV-Retriever's "positive-aware" mining does (Moreira et
al. 2024, who found 95% of the positive's score best): a negative's cosine
to the anchor must be at most ``(1 - margin)`` times the positive's.

sentence-transformers' own ``mine_hard_negatives`` knows an anchor's
positives but not its group, hence this module. faiss is searched through
:mod:`paramine.encoders.neighbours`, the one wrapper of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from paramine.encoders.neighbours import build_index, faiss_module
from paramine.schemas.errors import UsageError
from paramine.schemas.text_keys import comparison_key

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from paramine.encoders.training.config import TrainConfig
    from paramine.encoders.training.data import TrainData

log = logging.getLogger(__name__)

#: Neighbours searched per anchor at most: a row with fewer than N qualifying
#: sentences among its nearest this many gets none and is dropped (counted).
MAX_SEARCH = 1024


@dataclass
class MinedNegatives:
    """Negatives per training row, and how they were found.

    Attributes:
        negatives: Per row, N texts; empty for a row that got fewer than N.
        stats: Rows, rows with negatives, mean cosines of negatives and positives.
    """

    negatives: list[list[str]]
    stats: dict[str, Any] = field(default_factory=dict)


def mine_hard_negatives(
    anchors: Sequence[str],
    positives: Sequence[str],
    pivots: Sequence[str],
    encode: Callable[[list[str]], np.ndarray],
    count: int,
    margin: float = 0.05,
    pool: Sequence[str] | None = None,
) -> MinedNegatives:
    """Mine ``count`` negatives per (anchor, positive) row from the rows' sentences, or ``pool``.

    Args:
        anchors: The rows' first sentences; the negatives are near these.
        positives: The rows' second sentences.
        pivots: Each row's pivot sentence: rows sharing it (by comparison key)
            are one group, whose sentences are never a negative of its rows.
        encode: Texts to unit vectors, ``(texts, dim)`` float32.
        count: Negatives per row.
        margin: A negative's cosine to the anchor is at most ``(1 - margin)``
            times the positive's.
        pool: The sentences a negative may be (default: every anchor and
            positive). Aligned rows pass the candidates' side only, so a
            pivot's negative is a near miss in the language it is paired with.
    """
    import numpy as np

    faiss_module("--hard-negatives")  # a clear error before anything is encoded
    groups = [comparison_key(pivot) for pivot in pivots]
    # The pool's texts first: the index holds them, and a hit's number is its text's row.
    searched = sorted(set(anchors) | set(positives) if pool is None else set(pool))
    texts = searched + sorted((set(anchors) | set(positives)) - set(searched))
    row_of = {text: i for i, text in enumerate(texts)}
    keys = [comparison_key(text) for text in texts]
    # A group's sentences by key, and each text's groups (a text may sit in two).
    group_keys: dict[str, set[str]] = {}
    text_groups: list[set[str]] = [set() for _ in texts]
    for a, b, group in zip(anchors, positives, groups, strict=True):
        for text in (a, b):
            group_keys.setdefault(group, set()).add(keys[row_of[text]])
            text_groups[row_of[text]].add(group)
    vectors = np.ascontiguousarray(encode(texts), dtype="float32")  # (texts, dim)
    index = build_index(vectors[: len(searched)])
    anchor_rows = np.asarray([row_of[a] for a in anchors])
    positive_cos = np.einsum(
        "ij,ij->i", vectors[anchor_rows], vectors[[row_of[b] for b in positives]]
    )  # (rows,)

    def allowed(i: int, j: int, cosine: float) -> bool:
        group = groups[i]
        return (
            group not in text_groups[j]
            and keys[j] not in group_keys[group]
            and keys[j] not in (keys[row_of[anchors[i]]], keys[row_of[positives[i]]])
            and cosine <= (1.0 - margin) * float(positive_cos[i])
        )

    # Enough neighbours for the group's own sentences to be skipped, then more
    # for the rows that still lack some.
    largest = max(len(k) for k in group_keys.values()) if group_keys else 0
    queries = vectors[anchor_rows]
    negatives, cosines = _nearest_allowed(
        index, queries, searched, count, min(len(searched), count + largest + 2), allowed
    )
    kept = [i for i in range(len(anchors)) if negatives[i]]
    return MinedNegatives(
        negatives,
        {
            "per_row": count,
            "margin": margin,
            "rows": len(anchors),
            "rows_with_negatives": len(kept),
            "texts_searched": len(searched),
            "mean_cos_negative": _mean([c for i in kept for c in cosines[i]]),
            "mean_cos_positive": _mean([float(positive_cos[i]) for i in kept]),
        },
    )


def _nearest_allowed(
    index: Any,
    queries: np.ndarray,
    texts: list[str],
    count: int,
    want: int,
    allowed: Callable[[int, int, float], bool],
) -> tuple[list[list[str]], list[list[float]]]:
    """Each query's ``count`` nearest allowed texts and their cosines; none for a row short of them.

    Searches ``want`` neighbours first, then four times as many for the rows
    still short, up to ``MAX_SEARCH``.
    """
    negatives: list[list[str]] = [[] for _ in range(len(queries))]
    cosines: list[list[float]] = [[] for _ in range(len(queries))]
    pending = list(range(len(queries)))
    while pending:
        scores, neighbours = index.search(queries[pending], want)
        for i, row_scores, row_neighbours in zip(pending, scores, neighbours, strict=True):
            taken: list[str] = []
            taken_cos: list[float] = []
            for cosine, j in zip(row_scores.tolist(), row_neighbours.tolist(), strict=True):
                if j >= 0 and allowed(i, j, cosine):
                    taken.append(texts[j])
                    taken_cos.append(cosine)
                    if len(taken) == count:
                        break
            negatives[i], cosines[i] = taken, taken_cos
        short = [i for i in pending if len(negatives[i]) < count]
        if want >= min(len(texts), MAX_SEARCH):
            for i in short:
                negatives[i], cosines[i] = [], []
            break
        pending, want = short, min(len(texts), MAX_SEARCH, want * 4)
    return negatives, cosines


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def negative_columns(count: int) -> list[str]:
    """The dataset's columns for ``count`` negatives: ``negative_1`` ... ``negative_N``."""
    return [f"negative_{n}" for n in range(1, count + 1)]


class TrainingRows(NamedTuple):
    """The trainer's (anchor, positive) rows, and the pivot whose group each row is of."""

    anchors: list[str]
    positives: list[str]
    pivots: list[str]


def training_rows(
    train: pd.DataFrame, train_on: str, aligned: pd.DataFrame | None = None
) -> TrainingRows:
    """The (anchor, positive) rows ``--train-on`` makes of the training pairs.

    ``paraphrases``: (sentence_a, sentence_b) of each pair; ``bitext``: the
    aligned pairs, each distinct one once: those of ``aligned`` (every
    aligned line of the dataset, ``--aligned-rows all``) where given, else
    those the written pairs carry, (pivot_sentence, sentence_a) and
    (pivot_sentence, sentence_b), in the pairs' order; ``both``: the
    paraphrases, then the aligned pairs. The rows are the training split's,
    so no held-out pivot is among them.
    """
    rows = TrainingRows([], [], [])
    pivots = train["pivot_sentence"].tolist()
    if train_on in ("paraphrases", "both"):
        rows.anchors.extend(train["sentence_a"].tolist())
        rows.positives.extend(train["sentence_b"].tolist())
        rows.pivots.extend(pivots)
    if train_on not in ("bitext", "both"):
        return rows
    if aligned is not None:
        lines = [zip(aligned["pivot"].tolist(), aligned["candidate"].tolist(), strict=True)]
    else:
        lines = [
            zip(pivots, train[side].tolist(), strict=True) for side in ("sentence_a", "sentence_b")
        ]
    seen: set[tuple[str, str]] = set()
    for side in lines:
        for pivot, candidate in side:
            if (pivot, candidate) not in seen:
                seen.add((pivot, candidate))
                rows.anchors.append(pivot)
                rows.positives.append(candidate)
                rows.pivots.append(pivot)
    return rows


def training_columns(
    config: TrainConfig, data: TrainData, encode: Callable[[list[str]], np.ndarray]
) -> tuple[dict[str, list[str]], list[str], dict[str, Any] | None]:
    """The trainer's columns: anchor, positive, and ``negative_1..N`` with ``--hard-negatives``.

    MNRL reads a row as (anchor, positive, negative...), each negative one
    more candidate the anchor must rank below its positive. Rows that got
    fewer than N negatives are dropped (none get fewer columns than others),
    counted in the returned statistics (None without hard negatives). Each
    row's pivot is returned beside the columns (``judged_apart`` splits by it).

    Args:
        config: ``hard_negatives``, ``hard_negative_margin`` and ``batch_size`` are read.
        data: The training rows.
        encode: The base model's encoder (unit vectors).

    Raises:
        UsageError: Fewer rows than one batch got their negatives.
    """
    anchors, positives, pivots = training_rows(data.train, config.train_on, data.aligned)
    columns = {"anchor": anchors, "positive": positives}
    if not config.hard_negatives:
        return columns, pivots, None
    log.info("mining %d hard negatives per pair with the base model", config.hard_negatives)
    candidates = data.train["sentence_a"].tolist() + data.train["sentence_b"].tolist()
    if data.aligned is not None:
        candidates += data.aligned["candidate"].tolist()
    mined = mine_hard_negatives(
        anchors,
        positives,
        pivots,
        encode,
        config.hard_negatives,
        config.hard_negative_margin,
        pool=candidates,
    )
    keep = [i for i, negatives in enumerate(mined.negatives) if negatives]
    columns = {name: [values[i] for i in keep] for name, values in columns.items()}
    for n, name in enumerate(negative_columns(config.hard_negatives)):
        columns[name] = [mined.negatives[i][n] for i in keep]
    stats = {**mined.stats, "rows_dropped_without_negatives": len(anchors) - len(keep)}
    log.info("hard negatives: %s", stats)
    if len(keep) < config.batch_size:
        raise UsageError(
            f"only {len(keep)} training pairs got {config.hard_negatives} hard negatives, fewer "
            f"than one batch of {config.batch_size}: lower --hard-negatives or "
            "--hard-negative-margin"
        )
    return columns, [pivots[i] for i in keep], stats
