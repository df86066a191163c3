"""ScorePairs: the cosine of each (pivot, candidate) pair, from the vectors of its two texts.

Each distinct text of a run is encoded once (``EncodeTexts``); a pair is then
scored by looking its texts' vectors up, in two joins on text. A pair whose
text has no vector would be lost in the joins, so the stage keeps books: what
it takes in, it lets out.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

import apache_beam as beam
from paramine.pipelines.core.vectors import cosine
from paramine.schemas.records import ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

SCORE_PAIRS = Stage(
    "ScorePairs",
    ALIGNED_PAIR,
    (),
    "score each grouped (pivot, candidate) pair: the cosine of its texts' vectors, or the "
    "cosine stored for it by an earlier refresh",
)


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


class ScorePairs(beam.PTransform):
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
