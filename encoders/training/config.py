"""``TrainConfig``: the settings of ``paramine train``; the defaults are the paper's.

Built like ``EvaluateConfig`` (:mod:`paramine.encoders.evaluation.config`),
whose evaluation options it shares: ``train`` runs the same evaluators before
and after training as ``evaluate`` does.

This module imports neither torch nor sentence-transformers, so ``--help``
answers at once.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass
from typing import Any

from paramine.encoders.evaluation.config import EVALUATION, EvalOptions, parse_holdout_share
from paramine.schemas.errors import UsageError
from paramine.schemas.options import (
    option,
    optional,
    parse_fields,
    parse_non_negative,
    parse_positive,
)

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
POOLINGS = ("lstm", "mean")
#: ``--drop-near-identical`` with no value: pairs this similar teach nothing.
DEFAULT_NEAR_IDENTICAL = 0.9

DATA = "data"
MODEL = "model"
TRAINING = "training"


def parse_similarity(value: Any) -> float:
    """A similarity in (0, 1]."""
    number = float(value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} is not a similarity in (0, 1]")
    return number


@dataclass(frozen=True, kw_only=True)
class TrainConfig(EvalOptions):
    """Every setting of ``paramine train``; the defaults are the paper's (Dadas 2022)."""

    dataset: str = option(
        MISSING,
        "mined dataset directory (fsspec URL)",
        group=None,
        positional=True,
        metavar="DATASET",
    )
    base: str = option(
        MISSING,
        "base model: a sentence-transformers folder or a name `paramine models` resolves "
        "(e.g. e5-small)",
        group=None,
    )
    output: str = option(
        MISSING,
        "folder for the trained model (the model only; replaced when it holds an earlier "
        "paramine model)",
        group=None,
    )
    checkpoint_dir: str | None = option(
        None,
        "folder for checkpoints (default: OUTPUT-checkpoints, beside the model)",
        group=None,
    )
    min_score: float | None = option(
        None, "drop pairs with min(score_a, score_b) below", group=DATA, parse=optional(float)
    )
    max_score: float | None = option(
        None, "drop pairs with min(score_a, score_b) above", group=DATA, parse=optional(float)
    )
    drop_near_identical: float | None = option(
        None,
        "drop pairs whose normalized edit similarity is >= SIMILARITY "
        f"({DEFAULT_NEAR_IDENTICAL} when given without a value)",
        group=DATA,
        parse=optional(parse_similarity),
        const=DEFAULT_NEAR_IDENTICAL,
        metavar="SIMILARITY",
    )
    keep_eval_overlap: bool = option(
        False,
        "keep training pairs that share a sentence (after normalization) with the evaluation "
        "data: the held-out pairs, --eval-bitext, --eval-sts and the --suite's files; by "
        "default they are dropped and counted",
        group=DATA,
        switch=True,
    )
    eval_share: float = option(
        0.05,
        "share of pivots held out for paraphrase retrieval, by pivot hash (default 0.05; 0 = none)",
        group=EVALUATION,
        parse=parse_holdout_share,
    )
    eval_max_pairs: int = option(
        2000,
        "score retrieval on at most this many held-out pairs (default 2000; 0 = all)",
        group=EVALUATION,
        parse=parse_non_negative,
    )
    eval_batch_size: int = option(
        64, "encoding batch size (default 64)", group=EVALUATION, parse=parse_positive
    )
    pooling: str = option("lstm", "default lstm", group=MODEL, choices=POOLINGS)
    lstm_hidden: int = option(
        1024, "LSTM hidden size (paper: 1024/2048/4096)", group=MODEL, parse=parse_positive
    )
    bidirectional: bool = option(False, "bidirectional LSTM", group=MODEL, switch=True)
    normalize: bool = option(False, "L2-normalize the output", group=MODEL, switch=True)
    max_seq_length: int = option(
        128, "tokens per text (default 128)", group=MODEL, parse=parse_positive
    )
    epochs: float = option(3.0, "default 3 (the paper's)", group=TRAINING, parse=float)
    max_steps: int = option(
        -1, "stop after this many steps (overrides --epochs)", group=TRAINING, parse=int
    )
    batch_size: int = option(64, "default 64 (the paper's)", group=TRAINING, parse=int)
    lr: float = option(2e-6, "AdamW learning rate (default 2e-6)", group=TRAINING, parse=float)
    warmup: float = option(
        0.1, "warmup share of the steps (default 0.1)", group=TRAINING, parse=parse_holdout_share
    )
    precision: str = option("auto", "default auto", group=TRAINING, choices=PRECISIONS)
    save_steps: int = option(500, "checkpoint every N steps", group=TRAINING, parse=parse_positive)
    save_total_limit: int = option(
        2,
        "checkpoints kept in --checkpoint-dir, older ones deleted (default 2)",
        group=TRAINING,
        parse=parse_positive,
    )
    resume: bool = option(
        False,
        "continue from the latest checkpoint in --checkpoint-dir (step count continues)",
        group=TRAINING,
        switch=True,
    )
    logging_steps: int = option(
        10, "log the loss every N steps", group=TRAINING, parse=parse_positive
    )
    seed: int = option(42, "data order and initialization seed", group=TRAINING, parse=int)

    def __post_init__(self) -> None:
        parse_fields(self)
        if self.batch_size < 2:
            raise UsageError("--batch-size must be >= 2: the loss uses the batch's other pairs")
        if self.max_steps == 0 or self.max_steps < -1 or self.epochs <= 0:
            raise UsageError("--max-steps must be > 0 (or -1 for --epochs), and --epochs > 0")

    @property
    def checkpoints(self) -> str:
        """Where checkpoints go: ``--checkpoint-dir``, else ``OUTPUT-checkpoints``."""
        return self.checkpoint_dir or self.output.rstrip("/") + "-checkpoints"
