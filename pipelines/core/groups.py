"""What the grouping stages and the stages after them share: the pivot key and the group record.

And their options: ``GroupOptions`` (GroupByPivot, RegroupByPivot),
``MakePairsOptions`` and ``PostFilterOptions``, each the one place its
defaults and checks are written (``GroupOptions`` and ``MakePairsOptions``
declare their flags too: ``schemas.options.declared``). They sit here, below
the stages, because several stages and the settings read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paramine.schemas.options import option, parse_fields, parse_positive, parse_share_or_off
from paramine.schemas.records import ScoredPair
from paramine.schemas.text_keys import stable_hash

#: How a group becomes pairs: neighbours of a seeded shuffle (cover) or all pairs.
PAIR_MODES = ("cover", "all")


def parse_group_size(value: Any) -> int:
    """A group's cap: two candidates at least, or no group could make a pair."""
    size = int(value)
    if size < 2:
        raise ValueError(f"{size} must be at least 2")
    return size


@dataclass(frozen=True)
class GroupOptions:
    """The cap of GroupByPivot and RegroupByPivot.

    Attributes:
        max_group_size: The most distinct candidates a pivot keeps, chosen
            by hash (``--max-group-size``); two at least, or no group could
            make a pair.
    """

    max_group_size: int = option(
        50,
        "most distinct candidates kept per pivot, chosen deterministically (default: %(default)s)",
        group=None,
        parse=parse_group_size,
    )

    def __post_init__(self) -> None:
        parse_fields(self)


def parse_rival_margin(value: Any) -> float | None:
    """A cosine difference >= 0, or 'off'."""
    if value is None or str(value).strip().lower() == "off":
        return None
    number = float(value)
    if not 0.0 <= number < 2.0:
        raise ValueError(f"{number} is not a cosine difference in [0, 2), or 'off'")
    return number


@dataclass(frozen=True)
class ContestOptions:
    """ContestCandidates' setting, and RivalPairs': whether to contest at all.

    The stages are in ``stages/group/contest_candidates.py``; the options here,
    where the settings read them without importing Beam.

    Attributes:
        rival_margin: The absolute rule's cosine margin (half of it the
            relative rule's); None: no contest (``--rival-margin off``).
            Why 0.02: docs/thresholds.md, "Rival pivots".
    """

    rival_margin: float | None = option(
        0.02,
        "drop a candidate from a pivot's group when the input also aligns it with another "
        "pivot that it matches better by more than this cosine, or that it leans to by more "
        "than half of it beyond every group-mate; 'off' skips the check "
        "(docs/thresholds.md) (default: %(default)s)",
        group=None,
        parse=parse_rival_margin,
    )

    def __post_init__(self) -> None:
        parse_fields(self)

    @property
    def on(self) -> bool:
        return self.rival_margin is not None


@dataclass(frozen=True)
class MakePairsOptions:
    """How MakePairs pairs a group's candidates.

    Attributes:
        mode: ``cover`` (each candidate in at least one pair, ceil(n/2)
            pairs a group) or ``all`` (every pair) (``--pair-mode``).
        max_pairs_per_group: Cap on pairs per group in ``all`` mode
            (``--max-pairs-per-group``).
    """

    mode: str = option(
        "cover",
        "cover: every candidate in >= 1 pair, ceil(n/2) per group; all: every pair "
        "(default: %(default)s)",
        group=None,
        choices=PAIR_MODES,
        flag="--pair-mode",
    )
    max_pairs_per_group: int = option(
        100,
        "cap on pairs per group in 'all' mode (default: %(default)s)",
        group=None,
        parse=parse_positive,
    )

    def __post_init__(self) -> None:
        parse_fields(self)


def parse_near_equal(value: Any) -> float:
    """An edit similarity in (0, 1]: 1 drops only identical sentences."""
    number = float(value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} must be in (0, 1]")
    return number


@dataclass(frozen=True)
class PostFilterOptions:
    """What PostFilter counts as trivial or near-duplicate; MakePairs' cover avoids the first.

    Attributes:
        near_equal: Pairs whose normalized edit similarity is at least this
            are trivial (``--near-equal``).
        drop_inflections: Pairs that differ only in word endings are
            trivial too (``--drop-inflection-pairs``).
        near_duplicates: The 3-gram overlap (Jaccard) from which a pair is
            a near-duplicate of a pair of smaller id; ``None``: keep them
            (``--near-duplicates``).
    """

    near_equal: float = option(
        0.95,
        "drop pairs whose normalized edit similarity is at least this, except pairs that "
        "differ only in word endings (--drop-inflection-pairs decides on those) "
        "(default: %(default)s)",
        group=None,
        parse=parse_near_equal,
    )
    drop_inflections: bool = option(
        False,
        "also drop pairs that differ only in word endings ('Paliłem.' / 'Paliłam.'); their "
        "share is in the run's stats either way (default: keep them)",
        group=None,
        switch=True,
        flag="--drop-inflection-pairs",
    )
    near_duplicates: float | None = option(
        None,
        "drop a pair whose sentences' character 3-grams overlap this much (Jaccard) with a "
        "pair of smaller id ('Dzięki!' / 'Dziękuję!' and 'Dziękuję.' / 'Dzięki.'); "
        "stats.json counts them either way (docs/filters.md) (default: off)",
        group=None,
        parse=parse_share_or_off,
        metavar="SIMILARITY|off",
    )

    def __post_init__(self) -> None:
        parse_fields(self)


#: What candidates are grouped under: (pivot language, pivot key).
GroupKey = tuple[str, str]


def pivot_key(pivot: str) -> str:
    """The text key of a (normalized) pivot: "Thank you." == "thank you.".

    It also seeds what is drawn at random for a group (which candidates a
    capped group keeps, the order ``MakePairs`` pairs them in), so that a
    group's pairs do not depend on how its language is spelled.
    """
    return pivot.casefold()


def candidate_rank(pivot: str, candidate: str) -> int:
    """Where a candidate stands in its pivot's group: a capped group keeps the lowest ranks.

    A stable hash of the pivot key and the candidate, moved into the signed
    64-bit range (the order is the hash's) so that Beam's coder carries it
    as an integer: a larger one it pickles.
    """
    return stable_hash(pivot_key(pivot), candidate) - (1 << 63)


def pivot_language(pivot_lang: str) -> str:
    """The language part of a pivot's language code: ``ja-hira`` -> ``ja``.

    Script and region subtags are not part of a group's key: Tatoeba's
    ``jpn``, ``jpn_Hani`` and ``jpn_Hira`` test sets hold the same Japanese
    sentences, and one sentence is one pivot whichever set it came from.
    """
    return pivot_lang.partition("-")[0].casefold()


def group_key(pivot_lang: str, pivot: str) -> GroupKey:
    """The key candidates are grouped under: the pivot's language and its text key.

    One text in two languages is two pivots (German "Gift" is poison, English
    "gift" a present), so a run with pivots in several languages never puts
    their candidates in one group. With one pivot language the groups are
    those of the text key alone.
    """
    return pivot_language(pivot_lang), pivot_key(pivot)


@dataclass(frozen=True)
class Group:
    """The distinct candidates of one pivot, in a stable order.

    ``key`` is the pivot's text key (``pivot_key``); the group's identity is
    ``group_key(pivot_lang, pivot)``.
    """

    key: str
    pivot: str
    pivot_lang: str
    lang: str
    candidates: tuple[ScoredPair, ...]


def group_weight(group: Group) -> int:
    """The number of candidates a group holds, for the accounting identity."""
    return len(group.candidates)
