"""The base model of a training run: loaded as the run loads it, and scored without training.

``paramine train`` loads its base here; ``paramine adapt`` scores the base
on a pass's held-out lines before it pays for a training
(``--known-above``), with the same split and evaluation sets.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.evaluate import build_tasks, evaluate_model
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.data import prepare_data, read_evaluation

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


def load_base(config: TrainConfig) -> tuple[SentenceTransformer, dict[str, Any]]:
    """The base model, loaded, and where it was found (folder, hub id, revision, prefix)."""
    from paramine.encoders.models.folder_check import check_local_folder
    from paramine.encoders.models.resolve import resolve_model
    from paramine.encoders.modules.lstm_pooling import load_encoder
    from paramine.encoders.training.modeling import default_prefix

    resolved = resolve_model(config.base, flag="--base")
    check_local_folder(resolved, config.base, "--base")
    base = load_encoder(resolved.path, device=config.device)
    facts = {
        "spec": config.base,
        "path": resolved.path,
        "model_id": resolved.model_id,
        "revision": resolved.revision,
        "prefix": default_prefix(base, resolved.prefix),
    }
    return base, facts


def score_base(config: TrainConfig) -> dict[str, float]:
    """The base's figures on what ``config``'s run would evaluate, without training.

    The same held-out split, evaluation sets and exclusions as
    :func:`run_training`, so its figures are the ``base`` column that run
    would print: what ``paramine adapt`` reads to learn whether the base
    knows the language before it pays for a training.
    """
    evaluation = read_evaluation(config)
    data = prepare_data(config, evaluation)
    tasks = build_tasks(data.eval, evaluation.bitexts, evaluation.sts, config.eval_batch_size)
    if not tasks:
        return {}
    base, facts = load_base(config)
    log.info("scoring the base model")
    return evaluate_model(base, tasks, prefix=facts["prefix"])
