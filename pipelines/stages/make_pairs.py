"""MakePairs: paraphrase pairs inside each pivot's group of candidates."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import apache_beam as beam
from paramine.pipelines.core.groups import PAIR_MODES, Group
from paramine.pipelines.core.text import trivial_reason
from paramine.schemas.digest import stable_hash
from paramine.schemas.records import ParaphrasePair, ScoredPair


def pair_id(lang: str, a: str, b: str) -> str:
    """A stable id of an unordered pair of sentences of one language."""
    first, second = sorted((a, b))
    return f"{stable_hash(lang, first, second):016x}"


Pairing = list[tuple[ScoredPair, ScoredPair]]


def _cover(
    order: list[ScoredPair], rng: random.Random, near_equal: float, drop_inflections: bool
) -> Pairing:
    """Pair neighbours so that every candidate is in at least one pair.

    A candidate is paired with the next unpaired one that is not a trivial
    variant of it (same words up to case and punctuation, near-equal, or,
    with ``drop_inflections``, a word-ending variant): PostFilter drops
    trivial pairs, and a candidate whose only pair is
    dropped would be lost ("Jesteś zły?" / "jesteś zły" / "Czy jesteś zły?"
    pairs the first with the third, not the second). Without trivial
    variants this is plain neighbour pairing: ceil(n / 2) pairs.
    """

    def trivial(a: ScoredPair, b: ScoredPair) -> bool:
        return bool(
            trivial_reason(a.pair.candidate, b.pair.candidate, near_equal, drop_inflections)
        )

    pairs: Pairing = []
    unpaired = list(order)
    while unpaired:
        first = unpaired.pop(0)
        partner = next((i for i, c in enumerate(unpaired) if not trivial(first, c)), None)
        if partner is not None:
            pairs.append((first, unpaired.pop(partner)))
            continue
        fitting = [c for c in order if c is not first and not trivial(first, c)]
        if fitting:
            # Every fitting partner is paired already: reuse one.
            pairs.append((first, fitting[rng.randrange(len(fitting))]))
        elif unpaired:
            # Only trivial variants are left: pair them; PostFilter counts the drop.
            pairs.append((first, unpaired.pop(0)))
        elif len(order) > 1:
            others = [c for c in order if c is not first]
            pairs.append((first, others[rng.randrange(len(others))]))
    return pairs


def _pairs_of(
    group: Group, mode: str, max_pairs: int, near_equal: float, drop_inflections: bool
) -> Pairing:
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
    return _cover(order, rng, near_equal, drop_inflections)


def make_pairs(
    group: Group,
    mode: str = "cover",
    max_pairs: int = 100,
    near_equal: float = 0.95,
    drop_inflections: bool = False,
) -> list[ParaphrasePair]:
    """Return the paraphrase pairs of one group.

    Args:
        group: The pivot's distinct candidates.
        mode: ``cover`` or ``all``.
        max_pairs: Cap on pairs per group in ``all`` mode.
        near_equal: Edit similarity from which ``cover`` avoids pairing two
            candidates (PostFilter's ``near_equal``).
        drop_inflections: PostFilter's setting: with it, ``cover`` avoids
            pairing two word-ending variants too.
    """
    pairing = _pairs_of(group, mode, max_pairs, near_equal, drop_inflections)
    return [_row(group, a, b) for a, b in pairing]


def extend_cover(
    group: Group,
    covered: list[tuple[str, str]],
    near_equal: float = 0.95,
    drop_inflections: bool = False,
) -> list[ParaphrasePair]:
    """New pairs that cover the candidates of ``group`` that ``covered`` pairs leave out.

    A refresh keeps a group's old pairs (``covered``: their two sentences)
    while both their candidates stay in the group, and pairs only the
    candidates that are new or lost their partner: the uncovered ones are
    paired with each other as ``cover`` would, and one left over with any
    fitting candidate of the group. No unordered pair of ``covered`` is made
    again.
    """
    done = {frozenset(pair) for pair in covered}
    paired = {text for pair in covered for text in pair}
    rng = random.Random(stable_hash("make_pairs", group.key))
    order = [c for c in group.candidates if c.pair.candidate not in paired]
    rng.shuffle(order)
    others = [c for c in group.candidates if c.pair.candidate in paired]
    rows = []
    for a, b in _cover(order + others, rng, near_equal, drop_inflections):
        key = frozenset((a.pair.candidate, b.pair.candidate))
        if key in done or (a.pair.candidate in paired and b.pair.candidate in paired):
            continue
        done.add(key)
        rows.append(_row(group, a, b))
    return rows


def _row(group: Group, a: ScoredPair, b: ScoredPair) -> ParaphrasePair:
    return ParaphrasePair(
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


class MakePairs(beam.PTransform):
    """Emits pairs inside each group.

    Args:
        mode: ``cover`` (each candidate in at least one pair, ceil(n/2) pairs
            per group) or ``all`` (every pair, at most ``max_pairs`` a group).
        max_pairs: Cap on pairs per group in ``all`` mode.
        near_equal: PostFilter's bound, so that ``cover`` avoids trivial pairs.
        drop_inflections: PostFilter's setting, for the same reason.
    """

    def __init__(
        self,
        mode: str = "cover",
        max_pairs: int = 100,
        near_equal: float = 0.95,
        drop_inflections: bool = False,
    ) -> None:
        super().__init__()
        if mode not in PAIR_MODES:
            raise ValueError(f"pair mode {mode!r}; allowed: {', '.join(PAIR_MODES)}")
        if max_pairs < 1:
            raise ValueError(f"max_pairs must be positive, got {max_pairs}")
        self.mode = mode
        self.max_pairs = max_pairs
        self.near_equal = near_equal
        self.drop_inflections = drop_inflections

    def expand(self, groups: beam.PCollection) -> beam.PCollection:
        mode, max_pairs, near_equal = self.mode, self.max_pairs, self.near_equal
        drop_inflections = self.drop_inflections

        def pairs(group: Group) -> Iterator[ParaphrasePair]:
            yield from make_pairs(group, mode, max_pairs, near_equal, drop_inflections)

        return groups | "PairUp" >> beam.FlatMap(pairs)
