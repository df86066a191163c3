"""The records' own behaviour where it is written by hand: AlignedPair's constructor."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from paramine.schemas.records import AlignedPair


def test_an_aligned_pair_is_built_frozen_compared_and_copied_as_a_dataclass() -> None:
    pair = AlignedPair("Yes.", "Tak.", "en", "pl", "subs", "a.tsv", 3)
    by_name = AlignedPair(
        pivot="Yes.", candidate="Tak.", pivot_lang="en", lang="pl", corpus="subs", shard="a.tsv",
        line=3,
    )  # fmt: skip
    assert pair == by_name and hash(pair) == hash(by_name)
    assert dataclasses.astuple(pair) == ("Yes.", "Tak.", "en", "pl", "subs", "a.tsv", 3)
    assert pair != dataclasses.replace(pair, line=4)
    assert pickle.loads(pickle.dumps(pair)) == pair
    assert repr(pair).startswith("AlignedPair(pivot='Yes.', candidate='Tak.'")
    with pytest.raises(dataclasses.FrozenInstanceError):
        pair.line = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        AlignedPair("Yes.", "Tak.", "en", "pl", "subs", "a.tsv")  # type: ignore[call-arg]
