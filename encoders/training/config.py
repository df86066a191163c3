"""``TrainConfig``: the settings of ``paramine train``; the defaults are the paper's recipe.

Built like ``EvaluateConfig`` (:mod:`paramine.encoders.evaluation.config`),
whose evaluation options it shares: ``train`` runs the same evaluators before
and after training as ``evaluate`` does.

The settings a recipe gives (:data:`~paramine.encoders.training.recipes.RECIPE_KEYS`)
default to None, "the recipe's"; ``__post_init__`` fills them from
``--recipe``, so an explicit flag always wins and a config built from Python
resolves the same way as one from the command line.

This module imports neither torch nor sentence-transformers, so ``--help``
answers at once.

Why it is longer than 400 lines: each of ``paramine train``'s options is
declared here once, its flag, default, check and help together (about ten
lines an option); split across modules, one command's options would be read
in several places.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass

from paramine.encoders.evaluation.config import (
    EVAL_SHARE,
    EVALUATION,
    EvalOptions,
    parse_holdout_share,
)
from paramine.encoders.training.recipes import (
    ALIGNED_ROWS,
    EMBEDDINGS,
    LOSS_DIRECTIONS,
    RECHECK_BY,
    RECIPE_KEYS,
    RECIPES,
    TRAIN_ON,
    parse_drop_share,
    resolve_recipe,
)
from paramine.schemas.errors import UsageError
from paramine.schemas.options import (
    one_of,
    option,
    optional,
    parse_fields,
    parse_non_negative,
    parse_positive,
    parse_share_to_one,
    parse_similarity,
)

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
POOLINGS = ("lstm", "mean", "lstm-residual")
LOSSES = ("mnrl", "cached")
SELECT_ON = ("none", "dev")
#: ``--drop-near-identical`` with no value: pairs this similar teach nothing.
DEFAULT_NEAR_IDENTICAL = 0.9
#: ``--aligned-max-false-accept``: an aligned line that scores below what half
#: of the mismatched pairs reach looks more like a mismatch than a translation.
DEFAULT_ALIGNED_FALSE_ACCEPT = 0.5
#: ``--aligned-max-true-loss``: how much of the language's own lines a higher
#: cut may cost (``training/aligned.py``'s ``tighter_share``). On the first
#: passes of five Tatoeba sets not in shared/ it moved Tatar's training rows
#: from 110 planted lines to 22 for 38 of its 1,092 true ones, and left the
#: languages the base barely tells from the null within 0.06 of the median.
DEFAULT_ALIGNED_TRUE_LOSS = 0.02

DATA = "data"
MODEL = "model"
TRAINING = "training"
SELECTION = "model selection and seeds"


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
    exclude_sentences: tuple[str, ...] = option(
        (),
        "drop every training row (pair or aligned line) one of whose sentences, after "
        "normalization, is a line of this file, --keep-eval-overlap or not; repeatable "
        "(default: none)",
        group=DATA,
        many=True,
        metavar="FILE",
    )
    exclude_suite: str | None = option(
        None,
        "the same for every sentence of an evaluation suite's files, all splits, without "
        "scoring it: a built-in name (pl) or a suite file; its files under --suite-data "
        "(default: none)",
        group=DATA,
        metavar="NAME|FILE",
    )
    eval_share: float = option(
        EVAL_SHARE,
        f"share of pivots held out for paraphrase retrieval, by pivot hash (default {EVAL_SHARE}; "
        "0 = none)",
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
    recipe: str = option(
        "paper",
        "a set of defaults for --pooling, --lr, --head-lr, --batch-size, --epochs, --loss, "
        "--loss-directions, --train-on, --aligned-rows and --embeddings; explicit flags override "
        "it. paper "
        "(default): Dadas 2022, for large data "
        "(LSTM 1024, lr 2e-6, batch 64, 3 epochs, MNRL); small: for a few thousand pairs and "
        "a sentence encoder as base (lstm-residual, lr 2e-5, head lr 1e-4, cached MNRL); "
        "adapt: for a language the base hardly knows (lstm-residual, lr 5e-5, batch 32, 1 "
        "epoch, MNRL both ways, the paraphrases and every aligned line of the dataset); see "
        "docs/training.md",
        group=TRAINING,
        choices=tuple(RECIPES),
    )
    pooling: str = option(
        None,
        "lstm: an LSTM replaces the base's pooling (paper); mean: mean pooling; "
        "lstm-residual: the base's own pooling plus a zero-initialized projection of an LSTM "
        "state, so training starts from the base's embeddings (default: the recipe's)",
        group=MODEL,
        parse=optional(one_of(POOLINGS)),
        choices=POOLINGS,
    )
    embeddings: str = option(
        None,
        "train: the Transformer's word embeddings learn with the rest; freeze: they stay the "
        "base's, and each step costs about half as much on CPU (most of a multilingual "
        "model's weights are its vocabulary's) (default: the recipe's)",
        group=MODEL,
        parse=optional(one_of(EMBEDDINGS)),
        choices=EMBEDDINGS,
    )
    lstm_hidden: int = option(
        1024, "LSTM hidden size (paper: 1024/2048/4096)", group=MODEL, parse=parse_positive
    )
    bidirectional: bool = option(False, "bidirectional LSTM", group=MODEL, switch=True)
    normalize: bool = option(False, "L2-normalize the output", group=MODEL, switch=True)
    max_seq_length: int = option(
        128, "tokens per text (default 128)", group=MODEL, parse=parse_positive
    )
    epochs: float = option(
        None, "default: the recipe's (3, the paper's)", group=TRAINING, parse=optional(float)
    )
    max_steps: int = option(
        -1, "stop after this many steps (overrides --epochs)", group=TRAINING, parse=int
    )
    min_steps: int = option(
        None,
        "train at least this many steps: more epochs where --epochs make fewer (default: the "
        "recipe's; adapt 270, the others 0)",
        group=TRAINING,
        parse=optional(int),
    )
    drop_hardest: float = option(
        None,
        "share of each batch's rows with the highest loss (mostly misaligned) left out of its "
        "gradient, from 0 over the first epoch (default: the recipe's; adapt 0.1, others 0)",
        group=TRAINING,
        parse=optional(parse_drop_share),
    )
    recheck_false_accept: float = option(
        None,
        "in a run of more than one epoch, judge every row again when the first epoch is over, "
        "with the model as trained so far: a row scoring below what this share of mismatched "
        "rows reach (each row's anchor beside other rows' positives) stays out of the rest of "
        "training; 1 judges none again (default: the recipe's; adapt 0.1, others 1)",
        group=TRAINING,
        parse=optional(parse_share_to_one),
        metavar="SHARE",
    )
    recheck_by: str = option(
        "model",
        "who judges the rows again for --recheck-false-accept: model, the model in training "
        "after its first epoch, which has seen each row once; other-half, before training, two "
        "models each trained on the rows of half the pivots (by hash; half the run's steps "
        "each, one run's cost in all) judge the other half's rows, and those below the null "
        "stay out of the whole run (on Ho's round 1, 479 rows: 34 of 41 planted rows set "
        "aside and 73 true ones, where the model in training sets aside 28 and 154) "
        "(default: %(default)s)",
        group=TRAINING,
        choices=RECHECK_BY,
    )
    batch_size: int = option(
        None, "pairs per step (default: the recipe's, 64)", group=TRAINING, parse=optional(int)
    )
    lr: float = option(
        None,
        "AdamW learning rate of the Transformer (default: the recipe's; paper 2e-6)",
        group=TRAINING,
        parse=optional(float),
    )
    head_lr: float = option(
        None,
        "learning rate of the pooling head's parameters (the LSTM, the projection), apart "
        "from the Transformer's (default: the recipe's; paper: the same as --lr)",
        group=TRAINING,
        parse=optional(float),
    )
    loss: str = option(
        None,
        "mnrl: MultipleNegativesRankingLoss; cached: CachedMultipleNegativesRankingLoss, the "
        "same loss computed in mini-batches, so a large batch fits in memory (default: the "
        "recipe's)",
        group=TRAINING,
        parse=optional(one_of(LOSSES)),
        choices=LOSSES,
    )
    loss_directions: str = option(
        None,
        "which in-batch contests the loss scores: forward (each anchor against the batch's "
        "positives, as Dadas 2022); both (and each positive against the anchors); all (and "
        "anchors against anchors, positives against positives) (default: the recipe's)",
        group=TRAINING,
        parse=optional(one_of(tuple(LOSS_DIRECTIONS))),
        choices=tuple(LOSS_DIRECTIONS),
    )
    train_on: str = option(
        None,
        "what a training row is: paraphrases (sentence_a, sentence_b); bitext: the aligned "
        "pairs each written pair carries, (pivot_sentence, sentence_a) and (pivot_sentence, "
        "sentence_b), once each; or both (default: the recipe's)",
        group=TRAINING,
        parse=optional(one_of(TRAIN_ON)),
        choices=TRAIN_ON,
    )
    aligned_rows: str = option(
        None,
        "where the aligned rows of --train-on bitext and both come from: written, the "
        "(pivot, candidate) pairs the written pairs carry; all, every aligned line the "
        "dataset's Prefilter kept (its scored/ table: mine with --write-scored), but those "
        "that score as mismatched pairs do (default: the recipe's)",
        group=DATA,
        parse=optional(one_of(ALIGNED_ROWS)),
        choices=ALIGNED_ROWS,
    )
    aligned_max_false_accept: float = option(
        DEFAULT_ALIGNED_FALSE_ACCEPT,
        "with --aligned-rows all, drop an aligned line whose score is below what this share "
        "of the dataset's mismatched pairs reach (its calibration's null: candidates paired "
        f"with other lines' pivots); 1 keeps every line (default {DEFAULT_ALIGNED_FALSE_ACCEPT})",
        group=DATA,
        parse=parse_share_to_one,
        metavar="SHARE",
    )
    aligned_max_true_loss: float = option(
        DEFAULT_ALIGNED_TRUE_LOSS,
        "with --aligned-rows all, raise that cut where the dataset's pass tells the "
        "language's lines from its mismatched pairs well: the strictest cut whose estimated "
        "cost is at most this share of the true lines (the mismatched lines estimated from "
        "those scoring under the null's median); 0 keeps the --aligned-max-false-accept cut "
        f"(default {DEFAULT_ALIGNED_TRUE_LOSS})",
        group=DATA,
        parse=parse_holdout_share,
        metavar="SHARE",
    )
    mini_batch_size: int = option(
        32,
        "texts per forward pass of --loss cached (memory, not the result; default 32)",
        group=TRAINING,
        parse=parse_positive,
    )
    hard_negatives: int = option(
        0,
        "mine N hard negatives per training row with faiss, from the dataset's candidate "
        "sentences by the base model's embeddings, never from the row's pivot group (default "
        "0: none; needs paramine[faiss])",
        group=TRAINING,
        parse=parse_non_negative,
        metavar="N",
    )
    hard_negative_margin: float = option(
        0.05,
        "a mined negative must be at most (1 - MARGIN) times as similar to the anchor as its "
        "positive, against false negatives (default 0.05)",
        group=TRAINING,
        parse=parse_holdout_share,
        metavar="MARGIN",
    )
    warmup: float = option(
        0.1, "warmup share of the steps (default 0.1)", group=TRAINING, parse=parse_holdout_share
    )
    precision: str = option(
        "auto",
        "autocast precision; auto (default): bf16 on a GPU that has it, else fp16; bf16 on a CPU "
        "with AVX512-BF16 or AMX, else fp32",
        group=TRAINING,
        choices=PRECISIONS,
    )
    save_steps: int = option(500, "checkpoint every N steps", group=TRAINING, parse=parse_positive)
    save_total_limit: int = option(
        2,
        "complete checkpoints kept in --checkpoint-dir, older ones deleted (default 2)",
        group=TRAINING,
        parse=parse_positive,
    )
    resume: bool = option(
        False,
        "continue from the newest complete checkpoint in --checkpoint-dir (step count "
        "continues); incomplete ones (a kill mid-save) are renamed incomplete-checkpoint-N",
        group=TRAINING,
        switch=True,
    )
    logging_steps: int = option(
        10, "log the loss every N steps", group=TRAINING, parse=parse_positive
    )
    quiet: bool = option(
        False,
        "no progress bar for the steps (the loss is still logged every --logging-steps); "
        "paramine adapt --quiet trains so",
        group=TRAINING,
        switch=True,
    )
    seed: int = option(42, "data order and initialization seed", group=TRAINING, parse=int)
    select_on: str = option(
        "none",
        "dev: keep the checkpoint that scores best on the --suite's dev splits (probes trained "
        "on train, scored on dev; test is read only for the final table); none: keep the "
        "last (default)",
        group=SELECTION,
        choices=SELECT_ON,
    )
    select_every: int = option(
        0,
        "with --select-on dev, score every K steps besides step 0 and the last step "
        "(default 0: those two only)",
        group=SELECTION,
        parse=parse_non_negative,
        metavar="K",
    )
    select_tasks: tuple[str, ...] = option(
        (),
        "score only these tasks of the suite for selection (repeatable; default: all)",
        group=SELECTION,
        many=True,
        metavar="TASK",
    )
    select_max_rows: int = option(
        1000,
        "for selection, at most N rows of each task's train and dev split, a fixed sample "
        "(default 1000; 0 = all: about 1 h per evaluation of the pl suite on a 2-core CPU)",
        group=SELECTION,
        parse=parse_non_negative,
        metavar="N",
    )
    seeds: int = option(
        1,
        "train N times, with --seed, --seed + 1, ...; each model in OUTPUT/seed-S, the mean and "
        "sample std of the tables in OUTPUT (default 1: the model in OUTPUT)",
        group=SELECTION,
        parse=parse_positive,
        metavar="N",
    )

    def __post_init__(self) -> None:
        parse_fields(self)
        given = {key: getattr(self, key) for key in RECIPE_KEYS}
        for key, value in resolve_recipe(self.recipe, given).items():
            object.__setattr__(self, key, value)
        if self.batch_size < 2:
            raise UsageError("--batch-size must be >= 2: the loss uses the batch's other pairs")
        if self.max_steps == 0 or self.max_steps < -1 or self.epochs <= 0:
            raise UsageError("--max-steps must be > 0 (or -1 for --epochs), and --epochs > 0")
        if self.min_steps < 0:
            raise UsageError(f"--min-steps {self.min_steps} must be 0 or more")
        if self.recheck_by == "other-half" and self.recheck_false_accept >= 1.0:
            raise UsageError("--recheck-by other-half judges rows: give --recheck-false-accept < 1")
        if self.lr <= 0 or self.head_lr <= 0:
            raise UsageError("--lr and --head-lr must be > 0")
        if self.select_on == "dev" and not self.suite:
            raise UsageError(
                "--select-on dev scores the dev splits of a suite: give --suite (and --suite-data)"
            )
        if self.select_on == "none" and (self.select_every or self.select_tasks):
            raise UsageError("--select-every and --select-tasks need --select-on dev")

    @property
    def checkpoints(self) -> str:
        """Where checkpoints go: ``--checkpoint-dir``, else ``OUTPUT-checkpoints``."""
        return self.checkpoint_dir or self.output.rstrip("/") + "-checkpoints"
