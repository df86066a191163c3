"""Training batches of texts of like length, with no text twice in a batch.

sentence-transformers pads a batch to its longest text, and attention costs
grow with the square of that length: on this 2-core CPU an e5-small step of
32 Tatoeba pairs took 1.2 s where every text was short and 21 s where one
line of 228 tokens stood among them. ``LengthGroupedNoDuplicatesSampler``
draws batches the way Hugging Face's ``LengthGroupedSampler`` does
(``group_by_length``): a random permutation is cut into mega-batches of
``MEGABATCH`` batches, each mega-batch is sorted by length and cut into
batches, and the batches are shuffled. The order is random and seeded by the
epoch, as the trainer's own samplers are; a batch holds rows of like length.

A text twice in one batch is a false negative for the multiple-negatives
ranking loss (the same Kabyle line aligned to an English and to a French
pivot would be told apart from itself), so, as sentence-transformers'
``NoDuplicatesBatchSampler`` does, a row whose text is already in the batch
waits for a later batch.

This module imports torch and sentence-transformers: the trainer's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch
from sentence_transformers.base.sampler import DefaultBatchSampler

if TYPE_CHECKING:
    from datasets import Dataset

#: Batches per mega-batch, Hugging Face's ``LengthGroupedSampler``'s figure:
#: enough rows for batches of like length, few enough for a random order.
MEGABATCH = 50
#: Columns that are no text of a row (a label, a weight).
NOT_TEXT = ("label", "weight", "dataset_name")


class LengthGroupedNoDuplicatesSampler(DefaultBatchSampler):
    """Batches of rows of like length in a seeded random order, no text twice in a batch.

    Args:
        dataset: The training rows; every column but ``NOT_TEXT`` holds texts.
        batch_size: Rows per batch.
        drop_last: Drop the last batch when it is short.
        valid_label_columns: The trainer's label columns (not texts).
        generator: The trainer's generator, reseeded with ``seed + epoch``.
        seed: The seed of the order.
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int,
        drop_last: bool,
        valid_label_columns: list[str] | None = None,
        generator: torch.Generator | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(
            dataset,
            batch_size=batch_size,
            drop_last=drop_last,
            valid_label_columns=valid_label_columns,
            generator=generator,
            seed=seed,
        )
        skip = set(NOT_TEXT) | set(valid_label_columns or ())
        columns = [dataset[name] for name in dataset.column_names if name not in skip]
        self.texts: list[tuple[str, ...]] = list(zip(*columns, strict=True))
        self.lengths = [sum(len(text) for text in row) for row in self.texts]

    def __len__(self) -> int:
        batches = len(self.texts) / self.batch_size
        return math.floor(batches) if self.drop_last else math.ceil(batches)

    def __iter__(self) -> Iterator[list[int]]:
        generator = self.generator or torch.Generator()
        generator.manual_seed(self.seed + self.epoch)
        order = torch.randperm(len(self.texts), generator=generator).tolist()
        size = self.batch_size * MEGABATCH
        batches: list[list[int]] = []
        waiting: list[int] = []  # rows deferred by a duplicate, first in the next mega-batch
        for start in range(0, len(order), size):
            rows = waiting + sorted(order[start : start + size], key=self.lengths.__getitem__)
            full, waiting = _fill(rows, self.texts, self.batch_size)
            batches.extend(full)
        while waiting:  # the last rows: short batches, still with no text twice
            full, rest = _fill(waiting, self.texts, self.batch_size, short=True)
            batches.extend(full)
            waiting = rest
        if self.drop_last:
            batches = [batch for batch in batches if len(batch) == self.batch_size]
        for i in torch.randperm(len(batches), generator=generator).tolist():
            yield batches[i]


def _fill(
    rows: list[int], texts: list[tuple[str, ...]], batch_size: int, short: bool = False
) -> tuple[list[list[int]], list[int]]:
    """Full batches from ``rows`` in order, a row whose text the batch holds deferred.

    A deferred row is offered first to each new batch, so a text that many
    rows share goes into one batch after another, not all to the end.

    Args:
        short: Also return the last batch when it is short (it always holds a row).

    Returns:
        The batches, and the rows left over (a short last batch first).
    """
    batches: list[list[int]] = []
    batch: list[int] = []
    seen: set[str] = set()
    deferred: list[int] = []

    def offer(row: int) -> bool:
        if any(text in seen for text in texts[row]):
            return False
        batch.append(row)
        seen.update(texts[row])
        return True

    for row in rows:
        if not offer(row):
            deferred.append(row)
        elif len(batch) == batch_size:
            batches.append(batch)
            batch, seen = [], set()
            waiting, deferred = deferred, []
            for earlier in waiting:
                if len(batch) == batch_size or not offer(earlier):
                    deferred.append(earlier)
            if len(batch) == batch_size:
                batches.append(batch)
                batch, seen = [], set()
    if short and batch:
        return [*batches, batch], deferred
    return batches, batch + deferred
