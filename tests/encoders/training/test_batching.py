"""The length-grouped, duplicate-free batch sampler of paramine train."""

from __future__ import annotations

import random

import pytest

datasets = pytest.importorskip("datasets")

from paramine.encoders.training.batching import (  # noqa: E402
    MEGABATCH,
    LengthGroupedNoDuplicatesSampler,
)


def _rows(n: int, seed: int = 0) -> dict[str, list]:
    """Rows of 2 to 400 characters; every tenth positive is the one five rows before.

    (As a Kabyle line aligned to an English and to a French pivot is two rows.)
    """
    rng = random.Random(seed)
    anchors: list[str] = []
    positives: list[str] = []
    for i in range(n):
        anchors.append(f"a{i} " + "x" * rng.randrange(1, 200))
        positives.append(positives[i - 5] if i % 10 == 9 else f"p{i} " + "y" * rng.randrange(200))
    return {"anchor": anchors, "positive": positives, "label": [float(i) for i in range(n)]}


def _sampler(data: dict[str, list], batch_size: int = 8, seed: int = 3, drop_last: bool = False):
    dataset = datasets.Dataset.from_dict(data)
    return LengthGroupedNoDuplicatesSampler(
        dataset, batch_size, drop_last, valid_label_columns=["label"], seed=seed
    )


def test_every_row_once_and_no_text_twice_in_a_batch() -> None:
    data = _rows(1000)
    batches = list(_sampler(data))
    rows = [row for batch in batches for row in batch]
    assert sorted(rows) == list(range(1000))
    for batch in batches:
        texts = [data[c][i] for i in batch for c in ("anchor", "positive")]
        assert len(texts) == len(set(texts)), batch
    assert sum(len(b) < 8 for b in batches) <= 3


def test_batches_hold_rows_of_like_length() -> None:
    data = _rows(2000, seed=1)
    length = [len(a) + len(p) for a, p in zip(data["anchor"], data["positive"], strict=True)]
    sampler = _sampler(data, batch_size=16)

    def spread(batches: list[list[int]]) -> float:
        return sum(max(length[i] for i in b) - min(length[i] for i in b) for b in batches)

    grouped = list(sampler)
    order = list(range(2000))
    random.Random(0).shuffle(order)
    plain = [order[i : i + 16] for i in range(0, 2000, 16)]
    # Padding to a batch's longest text costs what the spread of lengths does.
    assert spread(grouped) < 0.25 * spread(plain)


def test_order_is_seeded_by_seed_and_epoch() -> None:
    data = _rows(600)
    first, again, other = _sampler(data), _sampler(data), _sampler(data, seed=4)
    assert list(first) == list(again)
    assert list(first) != list(other)
    again.set_epoch(1)
    assert list(again) != list(first)
    assert len(first) == 75


def test_a_text_many_rows_share_goes_one_row_a_batch() -> None:
    data = _rows(800)
    data["positive"][::8] = ["shared"] * 100
    batches = list(_sampler(data))
    assert sorted(row for batch in batches for row in batch) == list(range(800))
    assert all(sum(data["positive"][i] == "shared" for i in b) <= 1 for b in batches)
    assert sum(len(b) < 8 for b in batches) <= 3


def test_drop_last_and_rows_that_repeat_one_text() -> None:
    # Every row shares its positive with the others: one row per batch is all there can be.
    data = {"anchor": [f"a{i}" for i in range(5)], "positive": ["same"] * 5}
    batches = list(_sampler(data, batch_size=4))
    assert sorted(len(b) for b in batches) == [1] * 5
    assert list(_sampler(data, batch_size=4, drop_last=True)) == []
    big = _rows(MEGABATCH * 8 * 2 + 5)
    assert all(len(b) == 8 for b in _sampler(big, drop_last=True))
