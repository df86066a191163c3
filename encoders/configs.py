"""``TrainConfig`` and ``EvaluateConfig``: the settings of ``paramine train`` and ``evaluate``.

Built like ``MineConfig`` (:mod:`paramine.schemas.options`): each field is a
flag with its help text and parser, the parsers are generated from the
fields, and every value is checked once, when the config is made, whether
from the command line or from Python. The evaluation files and the suite
are ``EvalOptions``, shared by both commands: ``train`` runs the same
evaluators before and after training as ``evaluate`` does.

This module imports neither torch nor sentence-transformers, so ``--help``
answers at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import MISSING, dataclass
from typing import Any

from paramine.encoders.backends import BACKENDS
from paramine.encoders.suite import DATA_ENV, builtin_suites
from paramine.schemas.errors import UsageError
from paramine.schemas.options import (
    ConfigParser,
    add_fields,
    given_values,
    option,
    optional,
    parse_fields,
    parse_non_negative,
    parse_positive,
)

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
POOLINGS = ("lstm", "mean")
SPLITS = ("eval", "train", "all")
#: ``--drop-near-identical`` with no value: pairs this similar teach nothing.
DEFAULT_NEAR_IDENTICAL = 0.9

EVALUATION = "evaluation"
DATA = "data"
MODEL = "model"
TRAINING = "training"


def parse_holdout_share(value: Any) -> float:
    """A share in [0, 1): 0 holds nothing out."""
    number = float(value)
    if not 0.0 <= number < 1.0:
        raise ValueError(f"{number} is not a share in [0, 1)")
    return number


def parse_similarity(value: Any) -> float:
    """A similarity in (0, 1]."""
    number = float(value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} is not a similarity in (0, 1]")
    return number


def parse_files(value: Any) -> tuple[str, ...]:
    """One or two file names (a bitext: two aligned files, or one two-column TSV)."""
    files = (value,) if isinstance(value, str) else tuple(str(v) for v in value)
    if not 1 <= len(files) <= 2:
        raise ValueError(f"{list(files)}: give two line-aligned files or one two-column TSV")
    return files


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """What to score a model on besides the mined pairs: bitexts, STS files, a suite."""

    eval_bitext: tuple[tuple[str, ...], ...] = option(
        (),
        "bitext retrieval accuracy (both directions) on two line-aligned files, or one "
        "two-column TSV, e.g. laser_tatoeba_v1/tatoeba.pol-eng.pol tatoeba.pol-eng.eng; "
        "repeatable",
        group=EVALUATION,
        parse=parse_files,
        many=True,
        nargs="+",
        metavar="FILE",
    )
    eval_sts: tuple[str, ...] = option(
        (),
        "STS Spearman on sentence1<TAB>sentence2<TAB>score lines; repeatable",
        group=EVALUATION,
        many=True,
        metavar="FILE.tsv",
    )
    suite: str | None = option(
        None,
        "score on an evaluation suite with frozen vectors and logistic-regression probes, "
        f"and print its table: a built-in name ({', '.join(builtin_suites())}: the eight "
        "Polish tasks of Dadas 2022) or a suite file (YAML/JSON like encoders/suites/pl.yaml)",
        group=EVALUATION,
        metavar="NAME|FILE",
    )
    suite_data: str | None = option(
        None,
        f"the folder the suite's files are under (default: ${DATA_ENV}, then the suite "
        "file's data_root); for pl, the resources/downstream folder of "
        "sdadas/polish-sentence-evaluation",
        group=EVALUATION,
        metavar="DIR",
    )
    device: str | None = option(
        None, "cpu, cuda, ... (default: automatic)", group=None, metavar="DEVICE"
    )


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


@dataclass(frozen=True, kw_only=True)
class EvaluateConfig(EvalOptions):
    """Every setting of ``paramine evaluate``."""

    models: tuple[str, ...] = option(
        MISSING,
        "model folders (paramine-trained or any sentence-transformers folder) or names "
        "that `paramine models` resolves",
        group=None,
        positional=True,
        many=True,
        metavar="MODEL",
    )
    dataset: str | None = option(
        None, "mined dataset directory (fsspec URL) to retrieve in", group=None
    )
    split: str = option(
        "eval",
        "which rows of --dataset: the held-out pivots (default), the training ones, or all",
        group=None,
        choices=SPLITS,
    )
    eval_share: float = option(
        0.05,
        "share of pivots held out; must match the value given to `paramine train` (default 0.05)",
        group=None,
        parse=parse_holdout_share,
    )
    max_pairs: int = option(
        5000,
        "score at most this many pairs, a deterministic sample (default 5000; 0 = all)",
        group=None,
        parse=parse_non_negative,
    )
    backend: str = option(
        "auto",
        "how --suite encodes: auto (default: OpenVINO fp32 on CPU, torch on GPU, as "
        "`paramine mine`), torch, onnx or openvino",
        group=EVALUATION,
        choices=BACKENDS,
    )
    base: str | None = option(None, "a base model to score first, for comparison", group=None)
    batch_size: int = option(64, "encoding batch size", group=None, parse=parse_positive)
    json_path: str | None = option(
        None, "also write the results here as JSON", group=None, flag="--json", metavar="FILE"
    )

    def __post_init__(self) -> None:
        parse_fields(self)
        if not self.models:
            raise UsageError("give at least one MODEL")
        if self.suite and (self.dataset or self.eval_bitext or self.eval_sts):
            raise UsageError(
                "--suite prints its own table: run it apart from --dataset, --eval-bitext and "
                "--eval-sts (two commands)"
            )
        if not (self.suite or self.dataset or self.eval_bitext or self.eval_sts):
            raise UsageError(
                "give --dataset DIR, --eval-bitext FILES, --eval-sts FILE.tsv or several; "
                "or --suite NAME|FILE"
            )

    @property
    def scored(self) -> list[str]:
        """The models in the order the table shows them: ``--base`` first."""
        return ([self.base] if self.base else []) + list(self.models)


def parse_config(config: type[Any], prog: str, description: str, argv: Sequence[str]) -> Any:
    """``config`` from a command line: flags from its fields, values checked once.

    Raises:
        UsageError: A bad flag or value (``--help`` still exits, as argparse's does).
    """
    parser = add_fields(ConfigParser(prog=prog, description=description), config)
    namespace: argparse.Namespace = parser.parse_args(list(argv))
    return config(**given_values(namespace, config))
