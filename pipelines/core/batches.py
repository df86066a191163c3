"""Rows: a list of records that Beam carries as one element between fused steps.

A DoFn that yields ``Rows`` (``DoFn.yields_batches``, ``get_output_batch_type``)
hands them, as they are, to the steps after it that take ``Rows``
(``process_batch``, ``get_input_batch_type``); a step that takes single
records gets them one by one, as from any other step, and a step that takes
``Rows`` after one that yields single records gets them gathered by the
runner (up to 4,096 a list). The PCollection's element is still the record,
with its own coder: only the hand-over within a worker changes.

Why not Beam's own ``List[T]`` batches: a DoFn that yields batches yields them
on every output, and Beam sizes each batch with the main output's element
coder (a hundred elements sampled a batch). The reader's other outputs (its
drops, rejects and repairs) are not pairs, so that coder cannot size them;
``Rows`` are sized by count, which the runner uses only for its byte counters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from apache_beam.typehints.batch import BatchConverter

#: The size the runner's byte counters are told a record has.
RECORD_BYTES = 100


class Rows(list):
    """A batch of records (``AlignedPair``, count rows, rejects): a list."""


class _RowsConverter(BatchConverter):
    """Beam's view of ``Rows`` for any record type."""

    @staticmethod
    # Named by the module, so that a copy imported under another name (the
    # source tree on sys.path) registers its own Rows rather than failing.
    @BatchConverter.register(name=f"{__name__}.Rows")
    def from_typehints(element_type: Any, batch_type: Any) -> _RowsConverter:
        if batch_type is not Rows:
            raise TypeError(f"{batch_type!r} is not Rows")
        return _RowsConverter(batch_type, element_type)

    def produce_batch(self, elements: Sequence[Any]) -> Rows:
        return Rows(elements)

    def explode_batch(self, batch: Rows) -> Iterator[Any]:
        return iter(batch)

    def combine_batches(self, batches: Sequence[Rows]) -> Rows:
        return Rows(row for batch in batches for row in batch)

    def get_length(self, batch: Rows) -> int:
        return len(batch)

    def estimate_byte_size(self, batch: Rows) -> int:
        return RECORD_BYTES * len(batch)
