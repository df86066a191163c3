"""EncodeTexts: each distinct text of a run encoded once, through RunInference.

texts | "Distinct" | "Encode" (RunInference, batches by token budget)   -> (text, vector)

A pivot that heads many groups ("Yes."), a candidate that is also a pivot
elsewhere, and a text repeated across shards are encoded once in the whole
run, not once per batch in which they happen to appear. Batches are packed
from texts of many groups up to a token budget, so they stay full however
small the groups are. ``ScorePairs`` (:mod:`paramine.pipelines.stages.score.score_pairs`)
joins the vectors back to the pairs.

Vectors do not depend on which texts share a batch: the handler
(:class:`~paramine.encoders.inference.handler.EncoderHandler`) encodes texts in groups
of equal token length, on CPU and on GPU.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.ml.inference.base import RunInference
from paramine.encoders.inference.handler import EncoderHandler


class EncodeTexts(beam.PTransform):
    """Encodes each distinct text of a PCollection of texts once: ``(text, vector)`` out.

    Args:
        encoder: The run's handler: model, device, prefix and token budget.
    """

    def __init__(self, encoder: EncoderHandler) -> None:
        super().__init__()
        self.encoder = encoder

    def expand(self, texts: beam.PCollection) -> beam.PCollection:
        return texts | "Distinct" >> beam.Distinct() | "Encode" >> RunInference(self.encoder)
