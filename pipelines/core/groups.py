"""What the grouping stages and the stages after them share: the pivot key and the group record."""

from __future__ import annotations

from dataclasses import dataclass

from paramine.schemas.records import ScoredPair
from paramine.schemas.text_keys import stable_hash

#: How a group becomes pairs: neighbours of a seeded shuffle (cover) or all pairs.
PAIR_MODES = ("cover", "all")


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
