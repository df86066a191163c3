"""A Beam coder for ``AlignedPair``: its fields as a tuple of strings and an integer.

Without one, Beam pickles a dataclass: the class path and every field name
travel with each record. The prefiltered pairs are written out once and read
twice more (``GroupByPivot`` and the rival search pick from them), so on the
local runner every distinct pair of the input sits encoded in memory between
stages: about 130 bytes as a tuple, 300 pickled, and a third of the time to
encode and decode. A PCollection uses it when its element type is
``AlignedPair`` (``with_output_types``) and the coder is registered
(``register_coders``, before the graph is built).
"""

from __future__ import annotations

from typing import Any

import apache_beam as beam
from apache_beam.coders import coders
from paramine.schemas.records import AlignedPair


class AlignedPairCoder(coders.Coder):
    """Encodes an ``AlignedPair`` as (pivot, candidate, pivot_lang, lang, corpus, shard, line)."""

    def __init__(self) -> None:
        text = coders.StrUtf8Coder()
        self._fields = coders.TupleCoder([text] * 6 + [coders.VarIntCoder()])

    def encode(self, pair: AlignedPair) -> bytes:
        return self._fields.encode(
            (
                pair.pivot,
                pair.candidate,
                pair.pivot_lang,
                pair.lang,
                pair.corpus,
                pair.shard,
                pair.line,
            )
        )

    def decode(self, encoded: bytes) -> AlignedPair:
        return AlignedPair(*self._fields.decode(encoded))

    def is_deterministic(self) -> bool:
        return True

    def to_type_hint(self) -> Any:
        return AlignedPair

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


def register_coders() -> None:
    """Register the coders above with Beam (the registry is per process; twice is harmless)."""
    beam.coders.registry.register_coder(AlignedPair, AlignedPairCoder)
