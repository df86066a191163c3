"""The held-out lines ``paramine adapt`` judges a round on, and two encoders compared on them.

The lines are those of held-out pivots in a pass's scored table, as
``paramine train`` builds them into its "held-out lines" retrieval set
(:func:`paramine.encoders.training.data.prepare_data`): the same lines in
every round of a loop, since the Prefilter, not the encoder, decides which
lines a pass scores. Two encoders are scored on them line by line
(:mod:`paramine.encoders.evaluation.paired`), so a round's gain comes with
its standard error.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paramine.encoders.evaluation.paired import PairedGain, line_hits, paired_gain
from paramine.encoders.training.base_model import load_base
from paramine.encoders.training.data import HELD_OUT_LINES, prepare_data, read_evaluation

if TYPE_CHECKING:
    from paramine.encoders.evaluation.eval_files import Bitext
    from paramine.encoders.training.config import TrainConfig

log = logging.getLogger(__name__)


def held_out_lines(config: TrainConfig) -> Bitext | None:
    """``config``'s held-out lines retrieval set, as its training evaluates; None without one."""
    evaluation = read_evaluation(config)
    prepare_data(config, evaluation)
    return next((b for b in evaluation.bitexts if b.name == HELD_OUT_LINES), None)


def compare_encoders(config: TrainConfig, before: str | None, after: str) -> PairedGain | None:
    """``after``'s gain over ``before`` (a model folder; None: ``config``'s base), line by line.

    Scored on ``config``'s held-out lines with the base's prefix, as its
    training scores them; None where the split holds no such lines.
    """
    from paramine.encoders.modules.lstm_pooling import load_encoder

    lines = held_out_lines(config)
    if lines is None:
        return None
    base, facts = load_base(config)
    prefix, batch = facts["prefix"], config.eval_batch_size
    log.info(
        "comparing %s with %s on %d held-out lines", after, before or "the base", len(lines.source)
    )
    earlier = base if before is None else load_encoder(before, device=config.device)
    hits_before = line_hits(earlier, lines, prefix, batch)
    del base, earlier
    hits_after = line_hits(load_encoder(after, device=config.device), lines, prefix, batch)
    return paired_gain(hits_before, hits_after)
