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

from collections.abc import Iterable, Sequence
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from paramine.encoders.handler import PairEncoderHandler, encode_unpadded
from paramine.encoders.run_inference import ModelHandler, RunInference
from paramine.pipelines.core.vectors import (  # noqa: F401
    ScoreByText,
    _attach_pivot_vector,
    _ScoreFn,
    _UseKnownCosineFn,
    cosine,
    known_or_encode,
    pair_texts,
)

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
