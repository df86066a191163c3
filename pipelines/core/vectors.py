"""Vectors joined back to pairs: each text is encoded once, each pair then scored by a lookup."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

import apache_beam as beam
import numpy as np
from paramine.schemas.records import AlignedPair, ScoredPair


def pair_texts(pair: AlignedPair) -> Iterator[str]:
    """The two texts of a pair that must be encoded to score it."""
    yield pair.pivot
    yield pair.candidate


def cosine(pivot_vector: np.ndarray, candidate_vector: np.ndarray) -> float:
    """The cosine of two unit vectors, in the pair handler's float32 arithmetic."""
    pivots = np.asarray(pivot_vector, dtype="float32")[None, :]  # (1, dim)
    candidates = np.asarray(candidate_vector, dtype="float32")[None, :]  # (1, dim)
    # Rounding puts identical texts at 1.0000001; a cosine stays in [-1, 1].
    return float((pivots * candidates).sum(axis=1).clip(-1.0, 1.0)[0])


def _attach_pivot_vector(joined: tuple[str, dict[str, list]]) -> Iterator:
    _, sides = joined
    # A text without pairs as pivot (a candidate only) yields nothing here.
    for vector in sides["vector"][:1]:
        for part, pair in sides["pairs"]:
            yield pair.candidate, (part, pair, vector)


class _ScoreFn(beam.DoFn):
    """The cosine of each pair that waits on a candidate text, from the two vectors.

    Pairs come tagged with the index of their part; ``keep`` holds the parts
    whose ScoredPairs keep both vectors.
    """

    def __init__(self, keep: frozenset[int]) -> None:
        self.keep = keep

    def process(self, joined: tuple[str, dict[str, list]]) -> Iterator[tuple[int, ScoredPair]]:
        _, sides = joined
        for candidate_vector in sides["vector"][:1]:
            for part, pair, pivot_vector in sides["pairs"]:
                value = cosine(pivot_vector, candidate_vector)
                if part in self.keep:
                    yield part, ScoredPair(pair, value, pivot_vector, candidate_vector)
                else:
                    yield part, ScoredPair(pair, value)


class _ByPart(beam.PartitionFn):
    """A scored pair's part: the index it was tagged with."""

    def partition_for(self, element: Any, num_partitions: int, *args: Any, **kwargs: Any) -> int:
        part: int = element[0]
        return part


class ScoreByText(beam.PTransform):
    """Scores aligned pairs from the vectors of their texts (``EncodeTexts``' output).

    Two joins on text: the pivot's vector, then the candidate's. Every text
    of the pairs must be among the vectors; a text shared by many pairs is
    joined, not encoded, again.

    Applied to one PCollection of pairs, or to a dict of named parts
    (``{"grouped": .., "rival": .., "sample": ..}``) scored in the same two
    joins, one output each. Each join buffers every vector of the run,
    whatever its pairs need, so scoring the parts together holds the vectors
    twice instead of twice per part.

    Args:
        vectors: ``(text, vector)`` for at least every text of the pairs.
        keep_vectors: Leave both vectors on each ScoredPair (margin scoring
            and the contest need them); otherwise they are dropped in the same
            step. ``True`` or ``False`` for every part, or the names of the
            parts that keep them.
    """

    def __init__(
        self, vectors: beam.PCollection, keep_vectors: bool | Collection[str] = False
    ) -> None:
        super().__init__()
        self.vectors = vectors
        self.keep_vectors = keep_vectors

    def expand(
        self, pairs: beam.PCollection | dict[str, beam.PCollection]
    ) -> beam.PCollection | dict[str, beam.PCollection]:
        parts = pairs if isinstance(pairs, dict) else {"pairs": pairs}
        names = list(parts)
        keep = self.keep_vectors
        kept = frozenset(
            i for i, name in enumerate(names) if (keep if isinstance(keep, bool) else name in keep)
        )
        # Each pair tagged with its part's index, keyed by its pivot.
        keyed = [
            parts[name]
            | (f"ByPivot[{name}]" if len(names) > 1 else "ByPivot")
            >> beam.Map(lambda p, i: (p.pivot, (i, p)), i)
            for i, name in enumerate(names)
        ]
        by_pivot = keyed[0] if len(keyed) == 1 else keyed | "AllParts" >> beam.Flatten()
        with_pivot = (
            {"pairs": by_pivot, "vector": self.vectors}
            | "JoinPivot" >> beam.CoGroupByKey()
            | "WithPivotVector" >> beam.FlatMap(_attach_pivot_vector)
        )
        scored = (
            {"pairs": with_pivot, "vector": self.vectors}
            | "JoinCandidate" >> beam.CoGroupByKey()
            | "Score" >> beam.ParDo(_ScoreFn(kept))
        )
        if not isinstance(pairs, dict):
            return scored | "Untag" >> beam.MapTuple(lambda _, pair: pair)
        split = scored | "Split" >> beam.Partition(_ByPart(), len(names))
        return {
            name: split[i] | f"Untag[{name}]" >> beam.MapTuple(lambda _, pair: pair)
            for i, name in enumerate(names)
        }


class _UseKnownCosineFn(beam.DoFn):
    """Pairs whose texts were scored before become ScoredPairs; the rest go to the encoder."""

    def process(self, joined: tuple[tuple[str, str], dict[str, list]]) -> Iterator:
        _, sides = joined
        known = sides["cosine"]
        for pair in sides["pairs"]:
            if known:
                yield beam.pvalue.TaggedOutput("scored", ScoredPair(pair, float(known[0])))
            else:
                yield pair


def known_or_encode(
    pairs: beam.PCollection, known: beam.PCollection | None, label: str
) -> tuple[beam.PCollection, beam.PCollection | None]:
    """Split pairs into those to encode and those whose stored cosine stands (``known``)."""
    if known is None:
        return pairs, None
    split = (
        {
            "pairs": pairs | f"{label}ByTexts" >> beam.Map(lambda p: ((p.pivot, p.candidate), p)),
            "cosine": known,
        }
        | f"{label}JoinKnown" >> beam.CoGroupByKey()
        | f"{label}UseKnown" >> beam.ParDo(_UseKnownCosineFn()).with_outputs("scored", main="new")
    )
    return split["new"], split["scored"]
