"""What scoring by vectors shares: a pair's texts, the cosine, and the cosines stored before."""

from __future__ import annotations

from collections.abc import Iterator

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
