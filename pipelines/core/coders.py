"""Beam coders for paramine's records and vectors, so that the runner does not pickle them.

Without a coder of its own, Beam pickles a dataclass (the class path and
every field name travel with each record) and a numpy array. The local
runner encodes every element that crosses a stage boundary, so at a million
input pairs that is hundreds of thousands of records and vectors a run.

- ``AlignedPairCoder``: a PCollection uses it when its element type is
  ``AlignedPair`` (``with_output_types``). The prefiltered pairs are written
  out once and read twice more (``GroupByPivot`` and the rival search), so on
  the local runner every distinct pair sits encoded in memory between
  stages: about 130 bytes as a tuple, 300 pickled, and a third of the time.
- ``RecordsCoder``: what Beam falls back to for a value of no declared type.
  The joins of texts with their vectors (``CoGroupByKey``) tag and flatten
  their inputs, and their types are lost on the way; this is the only coder
  that reaches them. It encodes ``AlignedPair``, ``ScoredPair`` and numeric
  numpy arrays as their fields and raw bytes, and pickles anything else, as
  Beam's own fallback does.

Both are registered by ``register_coders``, before the graph is built; the
coders travel inside the pipeline, so workers need not register them.
"""

from __future__ import annotations

import pickle
from typing import Any

import apache_beam as beam
import numpy as np
from apache_beam.coders import coders
from apache_beam.coders.typecoders import FirstOf
from paramine.schemas.records import AlignedPair, ScoredPair


def _pair_fields(pair: AlignedPair) -> tuple[str, str, str, str, str, str, int]:
    return (
        pair.pivot,
        pair.candidate,
        pair.pivot_lang,
        pair.lang,
        pair.corpus,
        pair.shard,
        pair.line,
    )


class AlignedPairCoder(coders.Coder):
    """Encodes an ``AlignedPair`` as (pivot, candidate, pivot_lang, lang, corpus, shard, line)."""

    def __init__(self) -> None:
        text = coders.StrUtf8Coder()
        self._fields = coders.TupleCoder([text] * 6 + [coders.VarIntCoder()])

    def encode(self, pair: AlignedPair) -> bytes:
        return self._fields.encode(_pair_fields(pair))

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


#: The first byte of a ``RecordsCoder`` encoding: what follows.
_PAIR, _SCORED, _ARRAY, _PICKLED = b"a", b"s", b"v", b"p"
#: numpy kinds encoded as raw bytes: booleans, integers, floats, complex.
_RAW_KINDS = frozenset("biufc")


class RecordsCoder(coders.Coder):
    """paramine's records and numpy arrays by their fields and bytes; anything else pickled.

    An array keeps its dtype (byte order included) and shape, and decodes
    as a writable copy, as unpickling gives. Not deterministic: a key of no
    declared type is encoded by Beam's deterministic coder, never by this one.
    """

    def __init__(self) -> None:
        # str, int, float, bytes, None and tuples of them, in compiled code.
        self._fields = coders.FastPrimitivesCoder().get_impl()

    def encode(self, value: Any) -> bytes:
        kind = type(value)
        if kind is AlignedPair:
            return _PAIR + self._fields.encode(_pair_fields(value))
        if kind is ScoredPair:
            fields = (
                *_pair_fields(value.pair),
                value.score,
                self._optional(value.pivot_vector),
                self._optional(value.candidate_vector),
            )
            return _SCORED + self._fields.encode(fields)
        if kind is np.ndarray and value.dtype.kind in _RAW_KINDS:
            return _ARRAY + self._encode_array(value)
        return _PICKLED + pickle.dumps(value, pickle.HIGHEST_PROTOCOL)

    def decode(self, encoded: bytes) -> Any:
        tag, body = encoded[:1], encoded[1:]
        if tag == _PAIR:
            return AlignedPair(*self._fields.decode(body))
        if tag == _SCORED:
            fields = self._fields.decode(body)
            return ScoredPair(
                AlignedPair(*fields[:7]),
                fields[7],
                self._optional_from(fields[8]),
                self._optional_from(fields[9]),
            )
        if tag == _ARRAY:
            return self._decode_array(body)
        if tag == _PICKLED:
            return pickle.loads(body)
        raise ValueError(f"not a RecordsCoder encoding: first byte {tag!r}")

    def _encode_array(self, array: Any) -> bytes:
        return self._fields.encode((array.dtype.str, array.shape, array.tobytes()))

    def _decode_array(self, encoded: bytes) -> Any:
        dtype, shape, raw = self._fields.decode(encoded)
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()

    def _optional(self, value: Any) -> bytes | None:
        """A vector field of ``ScoredPair``: None, or the value's own encoding."""
        return None if value is None else self.encode(value)

    def _optional_from(self, encoded: bytes | None) -> Any:
        return None if encoded is None else self.decode(encoded)

    def is_deterministic(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


class UntypedCoder(coders.FastPrimitivesCoder):
    """Beam's coder for values of no declared type, with ``RecordsCoder`` for what it does not know.

    Strings, numbers, bytes, tuples, lists and dicts are encoded as before;
    where Beam would pickle, ``RecordsCoder`` decides. The registry builds
    it for a type hint with no arguments (``Coder.from_type_hint``).
    """

    def __init__(self) -> None:
        super().__init__(fallback_coder=RecordsCoder())


_registered = False


def register_coders() -> None:
    """Register the coders above with Beam's registry, once per process.

    The records coder goes after Beam's protobuf coders, so that a protobuf
    message type keeps its own.
    """
    global _registered
    beam.coders.registry.register_coder(AlignedPair, AlignedPairCoder)
    if not _registered:
        beam.coders.registry.register_fallback_coder(
            FirstOf([coders.ProtoCoder, coders.ProtoPlusCoder, UntypedCoder])
        )
        _registered = True
