"""MakePairs: paraphrase pairs inside each pivot's group of candidates.

Its books count candidates, as RegroupByPivot's do: a group takes in its
candidates, and those in at least one pair are kept. Cover mode pairs every
candidate; ``all`` mode under ``--max-pairs-per-group`` may leave some in no
pair, dropped as ``over_pair_cap``. The pairs made go on to PostFilter,
whose books count pairs.

A refresh hands a revisited pivot's old pairs in (``previous``): in cover
mode the group keeps those still whole and pairs only what they leave out.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.core.groups import (
    Group,
    GroupKey,
    MakePairsOptions,
    PostFilterOptions,
    group_key,
)
from paramine.pipelines.core.text import trivial_reason
from paramine.schemas.records import ParaphrasePair, ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage
from paramine.schemas.text_keys import stable_hash

MAKE_PAIRS = Stage(
    "MakePairs",
    ALIGNED_PAIR,
    ("over_pair_cap",),
    "pair the candidates of each group (cover: each candidate in at least one pair; all: "
    "every pair, at most --max-pairs-per-group a group); counted in candidates, a candidate "
    "left in no pair by that cap is dropped",
)
#: The output of MakePairs' books: how many candidates of a group are in a pair.
PAIRED = "paired"


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
    mode: str = MakePairsOptions.mode,
    max_pairs: int = MakePairsOptions.max_pairs_per_group,
    near_equal: float = PostFilterOptions.near_equal,
    drop_inflections: bool = PostFilterOptions.drop_inflections,
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
    near_equal: float = PostFilterOptions.near_equal,
    drop_inflections: bool = PostFilterOptions.drop_inflections,
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


def _paired_candidates(pairs: Sequence[ParaphrasePair]) -> int:
    return len({text for pair in pairs for text in (pair.sentence_a, pair.sentence_b)})


class _PairUpFn(beam.DoFn):
    """The pairs of each group, and its books: candidates paired, and those left unpaired."""

    def __init__(self, mode: str, max_pairs: int, near_equal: float, drop_inflections: bool):
        self.settings = (mode, max_pairs, near_equal, drop_inflections)
        self.drop = Dropper(MAKE_PAIRS)

    def process(self, group: Group) -> Iterator:
        pairs = make_pairs(group, *self.settings)
        yield from pairs
        paired = _paired_candidates(pairs)
        yield beam.pvalue.TaggedOutput(PAIRED, paired)
        if paired < len(group.candidates):
            yield self.drop("over_pair_cap", len(group.candidates) - paired)


class _ExtendCoverFn(beam.DoFn):
    """Cover mode with old pairs: a pivot keeps those still whole, and covers the rest."""

    def __init__(self, near_equal: float, drop_inflections: bool) -> None:
        self.near_equal = near_equal
        self.drop_inflections = drop_inflections

    def process(self, joined: tuple[GroupKey, dict[str, list]]) -> Iterator:
        _, sides = joined
        old: list[ParaphrasePair] = [pair for pairs in sides["old"] for pair in pairs]
        group: Group | None = sides["group"][0] if sides["group"] else None
        members = {c.pair.candidate for c in group.candidates} if group is not None else set()
        whole = [pair for pair in old if {pair.sentence_a, pair.sentence_b} <= members]
        for pair in old:
            yield beam.pvalue.TaggedOutput("kept_old" if pair in whole else "gone", pair)
        if group is not None:
            covered = [(pair.sentence_a, pair.sentence_b) for pair in whole]
            new = extend_cover(group, covered, self.near_equal, self.drop_inflections)
            yield from new
            # Cover leaves no candidate of a group of two or more in no pair.
            yield beam.pvalue.TaggedOutput(PAIRED, _paired_candidates([*whole, *new]))


class MadePairs(NamedTuple):
    """What MakePairs makes: pairs, its books, and what became of old pairs (``previous``).

    Attributes:
        pairs: The new ``ParaphrasePair`` records.
        books: Candidates paired per group (kept) and ``(reason, n)`` drops.
        kept_old: Old pairs that stay as they were (cover mode with ``previous``).
        gone: Old pairs that the new ones replace.
    """

    pairs: beam.PCollection
    books: StageResult
    kept_old: beam.PCollection
    gone: beam.PCollection


class MakePairs(beam.PTransform):
    """Emits pairs inside each group.

    Args:
        options: The mode (``cover``: each candidate in at least one pair,
            ceil(n/2) pairs per group; ``all``: every pair) and ``all``
            mode's cap on pairs per group; ``None``: the defaults.
        post_filter: PostFilter's options, so that ``cover`` avoids the
            pairs PostFilter finds trivial (``near_equal``,
            ``drop_inflections``); ``None``: the defaults.
        previous: A refresh's old pairs of the pivots it mines again, as
            ``(group key, [ParaphrasePair])``: in cover mode a group keeps
            those whose two candidates it still holds; in ``all`` mode every
            pair is made again and the old ones are gone.
    """

    def __init__(
        self,
        options: MakePairsOptions | None = None,
        post_filter: PostFilterOptions | None = None,
        previous: beam.PCollection | None = None,
    ) -> None:
        super().__init__()
        options, post_filter = options or MakePairsOptions(), post_filter or PostFilterOptions()
        self.mode = options.mode
        self.max_pairs = options.max_pairs_per_group
        self.near_equal = post_filter.near_equal
        self.drop_inflections = post_filter.drop_inflections
        self.previous = previous

    def expand(self, groups: beam.PCollection) -> MadePairs:
        pipeline = groups.pipeline
        if self.previous is not None and self.mode == "cover":
            made = (
                {
                    "group": groups
                    | "GroupsByKey" >> beam.Map(lambda g: (group_key(g.pivot_lang, g.pivot), g)),
                    "old": self.previous,
                }
                | "JoinOldPairs" >> beam.CoGroupByKey()
                | "ExtendCover"
                >> beam.ParDo(_ExtendCoverFn(self.near_equal, self.drop_inflections)).with_outputs(
                    PAIRED, DROPPED, "kept_old", "gone", main="pairs"
                )
            )
            return MadePairs(
                made["pairs"],
                StageResult(made[PAIRED], made[DROPPED]),
                made["kept_old"],
                made["gone"],
            )
        made = groups | "PairUp" >> beam.ParDo(
            _PairUpFn(self.mode, self.max_pairs, self.near_equal, self.drop_inflections)
        ).with_outputs(PAIRED, DROPPED, main="pairs")
        if self.previous is None:
            gone = pipeline | "NoOldPairs" >> beam.Create([])
        else:
            # All mode makes every pair of the group again.
            gone = self.previous | "AllOldReplaced" >> beam.FlatMap(lambda kv: kv[1])
        kept_old = pipeline | "NoOldPairsKept" >> beam.Create([])
        return MadePairs(made["pairs"], StageResult(made[PAIRED], made[DROPPED]), kept_old, gone)
