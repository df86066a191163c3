"""The run's encoder: the mining settings' model, with the run's device and batches."""

from __future__ import annotations

from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings


def encoder_for(settings: MiningSettings, running: RunSettings) -> EncoderHandler:
    """The ``RunInference`` handler of a run: what it encodes with, where, in what batches."""
    return EncoderHandler.of(
        settings.encoder_options,
        device=running.device,
        share_across_processes=running.share_model_across_processes,
        token_budget=running.batch_tokens,
    )
