"""EncodeTexts and ScoreByText: each distinct text of a run encoded once, joined back to pairs.

texts | "Distinct" | "Encode" (RunInference, batches by token budget)   -> (text, vector)
pairs | "ByPivot" + vectors -> "WithPivotVector" | "ByCandidate" + vectors -> "Score"

A pivot that heads many groups ("Yes."), a candidate that is also a pivot
elsewhere, and a text repeated across shards are encoded once in the whole
run, not once per batch in which they happen to appear. Batches are packed
from texts of many groups up to a token budget, so they stay full however
small the groups are.

Scores do not depend on which texts share a batch: ``encode_unpadded``
encodes texts in groups of equal token length, and the cosine of a pair is
computed from its two vectors alone, in the same float32 arithmetic as the
pair handler's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apache_beam as beam
import numpy as np
from apache_beam.metrics import Metrics
from paramine.encoders.handler import PairEncoderHandler, encode_unpadded
from paramine.encoders.run_inference import ModelHandler, RunInference
from paramine.schemas.records import AlignedPair, ScoredPair

#: Tokens per RunInference batch of texts, estimated from their length; the
#: encoder still runs in sub-batches of at most 128 texts of equal length.
DEFAULT_TOKEN_BUDGET = 65_536


def estimated_tokens(text: str) -> int:
    """A cheap token estimate for packing batches: about 4 characters a token, plus specials."""
    return len(text) // 4 + 2


class TextEncoderHandler(ModelHandler[str, tuple[str, Any], Any]):
    """Encodes distinct texts with the run's encoder: text in, ``(text, unit vector)`` out.

    Wraps the run's ``PairEncoderHandler``: same model (the same loaded copy in
    one worker process), device and prefix, so texts are encoded as pairs
    would be.

    Args:
        encoder: The run's pair handler.
        token_budget: Estimated tokens per batch.
    """

    def __init__(self, encoder: PairEncoderHandler, token_budget: int = DEFAULT_TOKEN_BUDGET):
        super().__init__()
        if token_budget < 1:
            raise ValueError(f"token_budget must be positive, got {token_budget}")
        self.encoder = encoder
        self.token_budget = token_budget
        self._texts_encoded = Metrics.counter("paramine", "texts_encoded")

    def load_model(self) -> Any:
        return self.encoder.load_model()

    def run_inference(
        self,
        batch: Sequence[str],
        model: Any,
        inference_args: dict[str, Any] | None = None,
    ) -> Iterable[tuple[str, Any]]:
        prefix = self.encoder.prefix
        vectors = encode_unpadded(model, [prefix + text for text in batch])  # (texts, dim)
        self._texts_encoded.inc(len(batch))
        # Copies: a row view would keep the whole batch's matrix alive.
        return [(text, vectors[i].copy()) for i, text in enumerate(batch)]

    def batch_elements_kwargs(self) -> dict[str, Any]:
        return {
            "min_batch_size": self.token_budget,
            "max_batch_size": self.token_budget,
            "element_size_fn": estimated_tokens,
        }

    def share_model_across_processes(self) -> bool:
        return self.encoder.share_model_across_processes()

    def get_metrics_namespace(self) -> str:
        return "paramine"


class EncodeTexts(beam.PTransform):
    """Encodes each distinct text of a PCollection of texts once: ``(text, vector)`` out."""

    def __init__(self, encoder: PairEncoderHandler, token_budget: int = DEFAULT_TOKEN_BUDGET):
        super().__init__()
        self.handler = TextEncoderHandler(encoder, token_budget)

    def expand(self, texts: beam.PCollection) -> beam.PCollection:
        return texts | "Distinct" >> beam.Distinct() | "Encode" >> RunInference(self.handler)


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
        for pair in sides["pairs"]:
            yield pair.candidate, (pair, vector)


class _ScoreFn(beam.DoFn):
    """The cosine of each pair that waits on a candidate text, from the two vectors."""

    def __init__(self, keep_vectors: bool) -> None:
        self.keep_vectors = keep_vectors

    def process(self, joined: tuple[str, dict[str, list]]) -> Iterator[ScoredPair]:
        _, sides = joined
        for candidate_vector in sides["vector"][:1]:
            for pair, pivot_vector in sides["pairs"]:
                value = cosine(pivot_vector, candidate_vector)
                if self.keep_vectors:
                    yield ScoredPair(pair, value, pivot_vector, candidate_vector)
                else:
                    yield ScoredPair(pair, value)


class ScoreByText(beam.PTransform):
    """Scores aligned pairs from the vectors of their texts (``EncodeTexts``' output).

    Two joins on text: the pivot's vector, then the candidate's. Every text
    of the pairs must be among the vectors; a text shared by many pairs is
    joined, not encoded, again.

    Args:
        vectors: ``(text, vector)`` for at least every text of the pairs.
        keep_vectors: Leave both vectors on each ScoredPair (margin scoring
            needs them); otherwise they are dropped in the same step.
    """

    def __init__(self, vectors: beam.PCollection, keep_vectors: bool = False) -> None:
        super().__init__()
        self.vectors = vectors
        self.keep_vectors = keep_vectors

    def expand(self, pairs: beam.PCollection) -> beam.PCollection:
        by_pivot = pairs | "ByPivot" >> beam.Map(lambda p: (p.pivot, p))
        with_pivot = (
            {"pairs": by_pivot, "vector": self.vectors}
            | "JoinPivot" >> beam.CoGroupByKey()
            | "WithPivotVector" >> beam.FlatMap(_attach_pivot_vector)
        )
        return (
            {"pairs": with_pivot, "vector": self.vectors}
            | "JoinCandidate" >> beam.CoGroupByKey()
            | "Score" >> beam.ParDo(_ScoreFn(self.keep_vectors))
        )


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
