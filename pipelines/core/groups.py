"""What the grouping stages and the stages after them share: the pivot key and the group record."""

from __future__ import annotations

from dataclasses import dataclass

from paramine.schemas.records import ScoredPair

#: How a group becomes pairs: neighbours of a seeded shuffle (cover) or all pairs.
PAIR_MODES = ("cover", "all")


def pivot_key(pivot: str) -> str:
    """The grouping key of a (normalized) pivot: "Thank you." == "thank you."."""
    return pivot.casefold()


@dataclass(frozen=True)
class Group:
    """The distinct candidates of one pivot, in a stable order."""

    key: str
    pivot: str
    pivot_lang: str
    lang: str
    candidates: tuple[ScoredPair, ...]


def group_weight(group: Group) -> int:
    """The number of candidates a group holds, for the accounting identity."""
    return len(group.candidates)
