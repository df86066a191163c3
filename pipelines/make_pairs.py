"""MakePairs: paraphrase pairs inside each pivot's group of candidates."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import apache_beam as beam

from pipelines.group_by_pivot import Group, stable_hash
from schemas.records import ParaphrasePair, ScoredPair

PAIR_MODES = ("cover", "all")


def pair_id(lang: str, a: str, b: str) -> str:
    """A stable id of an unordered pair of sentences of one language."""
    first, second = sorted((a, b))
    return f"{stable_hash(lang, first, second):016x}"


def _pairs_of(group: Group, mode: str, max_pairs: int) -> list[tuple[ScoredPair, ScoredPair]]:
    # Seeded from the pivot: the same group gives the same pairs on every run.
    rng = random.Random(stable_hash("make_pairs", group.key))
    order = list(group.candidates)
    rng.shuffle(order)
    if mode == "all":
        combos = list(itertools.combinations(order, 2))
        if len(combos) > max_pairs:
            rng.shuffle(combos)
            combos = combos[:max_pairs]
        return combos
    # cover: neighbours pair up; an odd one out pairs with a random other, so
    # every candidate is in at least one of ceil(n / 2) pairs.
    pairs = list(zip(order[0::2], order[1::2], strict=False))
    if len(order) % 2:
        pairs.append((order[-1], order[rng.randrange(len(order) - 1)]))
    return pairs


def make_pairs(group: Group, mode: str = "cover", max_pairs: int = 100) -> list[ParaphrasePair]:
    """Return the paraphrase pairs of one group."""
    rows = []
    for a, b in _pairs_of(group, mode, max_pairs):
        rows.append(
            ParaphrasePair(
                sentence_a=a.pair.candidate,
                sentence_b=b.pair.candidate,
                lang=group.lang,
                pivot=group.pivot,
                pivot_lang=group.pivot_lang,
                score_a=a.score,
                score_b=b.score,
                group_size=len(group.candidates),
                corpus=a.pair.corpus,
                pair_id=pair_id(group.lang, a.pair.candidate, b.pair.candidate),
            )
        )
    return rows


class MakePairs(beam.PTransform):
    """Emits pairs inside each group.

    Args:
        mode: ``cover`` (each candidate in at least one pair, ceil(n/2) pairs
            per group) or ``all`` (every pair, at most ``max_pairs`` a group).
        max_pairs: Cap on pairs per group in ``all`` mode.
    """

    def __init__(self, mode: str = "cover", max_pairs: int = 100) -> None:
        super().__init__()
        if mode not in PAIR_MODES:
            raise ValueError(f"pair mode {mode!r}; allowed: {', '.join(PAIR_MODES)}")
        if max_pairs < 1:
            raise ValueError(f"max_pairs must be positive, got {max_pairs}")
        self.mode = mode
        self.max_pairs = max_pairs

    def expand(self, groups: beam.PCollection) -> beam.PCollection:
        mode, max_pairs = self.mode, self.max_pairs

        def pairs(group: Group) -> Iterator[ParaphrasePair]:
            yield from make_pairs(group, mode, max_pairs)

        return groups | "PairUp" >> beam.FlatMap(pairs)
