"""``paramine train``: fine-tune a sentence encoder on a mined paraphrase dataset.

The recipe of Dadas (2022): a pretrained Transformer, its pooling replaced by
an LSTM (:mod:`encoders.lstm_pooling`), trained with the multiple-negatives
ranking loss on (sentence_a, sentence_b) pairs with no text twice in a batch;
AdamW, lr 2e-6, linear decay after 10% warmup, batch 64, 3 epochs.

Training runs through sentence-transformers' ``SentenceTransformerTrainer``
(which needs ``datasets`` and ``accelerate``): checkpoints, resume, mixed
precision and the progress bar come from it.

Pivots are split before anything is filtered, by a hash of the normalized
pivot, so the held-out pairs are the same whatever the training filters, and
no pivot has pairs on both sides.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from pipelines.text import comparison_key, edit_similarity

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from schemas.manifest import Manifest

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
POOLINGS = ("lstm", "mean")
SPLITS = ("eval", "train", "all")
#: ``--drop-near-identical`` with no value: pairs this similar teach nothing.
DEFAULT_NEAR_IDENTICAL = 0.9


def pivot_key(pivot: str) -> str:
    """Return the key a pivot is split by: the mining pipeline's comparison key.

    Case, punctuation and spacing are ignored, so "Yes." and "yes" land on
    the same side of the split even where mining kept them apart.
    """
    return comparison_key(pivot)


def hash_fraction(text: str) -> float:
    """Return a stable number in [0, 1) for a text (same on every machine and run)."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def eval_mask(pivots: pd.Series, eval_share: float) -> pd.Series:
    """Return True for rows whose pivot falls in the held-out share."""
    if not 0.0 <= eval_share < 1.0:
        raise ValueError(f"--eval-share must be in [0, 1), got {eval_share}")
    # Hash each distinct pivot once: subtitles repeat pivots like "Yes." a lot.
    keys = pivots.map(pivot_key)
    fractions = {key: hash_fraction(key) for key in keys.unique()}
    return keys.map(fractions) < eval_share


def sample_rows(df: pd.DataFrame, max_rows: int) -> pd.DataFrame:
    """Return at most ``max_rows`` rows, a deterministic sample by pair_id hash."""
    if max_rows <= 0 or len(df) <= max_rows:
        return df
    order = df["pair_id"].map(hash_fraction).sort_values(kind="stable").index
    return df.loc[order[:max_rows]]


def read_dataset(dataset_url: str) -> tuple[pd.DataFrame, Manifest]:
    """Read a finished dataset's pairs (manifest and schema checked) as a DataFrame."""
    from schemas.reader import read_pairs

    table, manifest = read_pairs(dataset_url)
    return table.to_pandas(), manifest


def load_split(
    dataset_url: str, eval_share: float = 0.05, split: str = "eval", max_rows: int = 0
) -> pd.DataFrame:
    """Return one split of a dataset, as ``paramine train`` makes it.

    Args:
        dataset_url: The dataset directory, any fsspec URL.
        eval_share: Share of pivots held out.
        split: ``eval``, ``train`` (before training filters) or ``all``.
        max_rows: Keep a deterministic sample of at most this many rows; 0 keeps all.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    df, _ = read_dataset(dataset_url)
    if split != "all":
        held_out = eval_mask(df["pivot"], eval_share)
        df = df[held_out] if split == "eval" else df[~held_out]
    return sample_rows(df, max_rows).reset_index(drop=True)


def near_identical(a: pd.Series, b: pd.Series, threshold: float) -> pd.Series:
    """Return True where two texts' normalized edit similarity is >= ``threshold``.

    The similarity is the mining PostFilter's: Levenshtein similarity of the
    comparison keys (case, punctuation and spacing ignored).
    """
    similarity = [edit_similarity(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    return pd.Series(similarity, index=a.index, dtype="float64") >= threshold


def filter_pairs(
    df: pd.DataFrame,
    min_score: float | None = None,
    max_score: float | None = None,
    near_identical_threshold: float | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Apply the training filters; return the kept rows and drops by reason.

    Args:
        df: Pairs in ``PAIRS_SCHEMA`` columns.
        min_score: Drop pairs whose ``min(score_a, score_b)`` is below this.
        max_score: Drop pairs whose ``min(score_a, score_b)`` is above this.
        near_identical_threshold: Drop pairs at least this similar by edit distance.
    """
    dropped: dict[str, int] = {}
    # A pair is as good as its weaker alignment to the pivot.
    score = df[["score_a", "score_b"]].min(axis=1)
    if min_score is not None:
        drop = score < min_score
        dropped["below_min_score"] = int(drop.sum())
        df, score = df[~drop], score[~drop]
    if max_score is not None:
        drop = score > max_score
        dropped["above_max_score"] = int(drop.sum())
        df = df[~drop]
    if near_identical_threshold is not None:
        drop = near_identical(df["sentence_a"], df["sentence_b"], near_identical_threshold)
        dropped["near_identical"] = int(drop.sum())
        df = df[~drop]
    return df, dropped


@dataclass
class TrainData:
    """The rows a training run uses, and how they were chosen."""

    train: pd.DataFrame
    eval: pd.DataFrame
    manifest: Manifest
    counts: dict[str, Any] = field(default_factory=dict)


def prepare_data(args: argparse.Namespace) -> TrainData:
    """Read the dataset, split it by pivot, filter the training side."""
    df, manifest = read_dataset(args.dataset)
    held_out = eval_mask(df["pivot"], args.eval_share)
    eval_df = sample_rows(df[held_out], args.eval_max_pairs)
    train_df, dropped = filter_pairs(
        df[~held_out], args.min_score, args.max_score, args.drop_near_identical
    )
    counts = {
        "rows_read": len(df),
        "eval_pivots_rows": int(held_out.sum()),
        "eval_rows_scored": len(eval_df),
        "train_rows_before_filters": int((~held_out).sum()),
        "train_dropped": dropped,
        "train_rows": len(train_df),
    }
    return TrainData(
        train_df.reset_index(drop=True), eval_df.reset_index(drop=True), manifest, counts
    )


def build_model(
    base: SentenceTransformer,
    pooling: str,
    lstm_hidden: int,
    bidirectional: bool,
    normalize: bool,
    max_seq_length: int | None,
    device: str | None = None,
) -> SentenceTransformer:
    """Return Transformer (taken from ``base``) + the chosen pooling (+ Normalize)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    from encoders.lstm_pooling import LSTMPooling

    transformer = base[0]
    if not isinstance(transformer, Transformer):
        raise ValueError(
            f"the base model's first module is {type(transformer).__name__}, not a Transformer; "
            "give a Transformer-based sentence-transformers folder"
        )
    if max_seq_length:
        transformer.max_seq_length = max_seq_length
    width = transformer.get_embedding_dimension()
    head: Any
    if pooling == "lstm":
        head = LSTMPooling(width, hidden_size=lstm_hidden, bidirectional=bidirectional)
    elif pooling == "mean":
        head = Pooling(width, pooling_mode="mean")
    else:
        raise ValueError(f"--pooling must be one of {', '.join(POOLINGS)}; got {pooling!r}")
    modules = [transformer, head] + ([Normalize()] if normalize else [])
    return SentenceTransformer(modules=modules, device=device)


def choose_precision(precision: str) -> str:
    """Resolve ``auto`` to bf16/fp16 on a GPU and fp32 on CPU; check the rest."""
    import torch

    if precision not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    cuda = torch.cuda.is_available()
    if precision == "auto":
        if not cuda:
            return "fp32"
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    if precision in ("bf16", "fp16") and not cuda:
        raise ValueError(f"--precision {precision} needs a CUDA GPU; use fp32 (or auto) on CPU")
    return precision


def default_prefix(base: SentenceTransformer, resolved_prefix: str) -> str:
    """Return the prefix the base model expects: the resolver's, else its default prompt."""
    if resolved_prefix:
        return resolved_prefix
    name = getattr(base, "default_prompt_name", None)
    return str(base.prompts.get(name, "")) if name else ""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paramine train",
        description="Fine-tune a sentence encoder (Transformer + LSTM pooling) on a mined "
        "paraphrase dataset with the multiple-negatives ranking loss (Dadas 2022).",
    )
    parser.add_argument("dataset", metavar="DATASET", help="mined dataset directory (fsspec URL)")
    parser.add_argument(
        "--base",
        required=True,
        help="base model: a sentence-transformers folder or a name `paramine models` resolves "
        "(e.g. e5-small)",
    )
    parser.add_argument(
        "--output", required=True, help="output folder for the model and checkpoints"
    )
    data = parser.add_argument_group("data")
    data.add_argument("--min-score", type=float, help="drop pairs with min(score_a, score_b) below")
    data.add_argument("--max-score", type=float, help="drop pairs with min(score_a, score_b) above")
    data.add_argument(
        "--drop-near-identical",
        type=float,
        nargs="?",
        const=DEFAULT_NEAR_IDENTICAL,
        metavar="SIMILARITY",
        help="drop pairs whose normalized edit similarity is >= SIMILARITY "
        f"({DEFAULT_NEAR_IDENTICAL} when given without a value)",
    )
    data.add_argument(
        "--eval-share",
        type=float,
        default=0.05,
        help="share of pivots held out for evaluation, by pivot hash (default 0.05; 0 = none)",
    )
    data.add_argument(
        "--eval-max-pairs",
        type=int,
        default=2000,
        help="score retrieval on at most this many held-out pairs (default 2000; 0 = all)",
    )
    model = parser.add_argument_group("model")
    model.add_argument("--pooling", choices=POOLINGS, default="lstm", help="default lstm")
    model.add_argument(
        "--lstm-hidden", type=int, default=1024, help="LSTM hidden size (paper: 1024/2048/4096)"
    )
    model.add_argument("--bidirectional", action="store_true", help="bidirectional LSTM")
    model.add_argument("--normalize", action="store_true", help="L2-normalize the output")
    model.add_argument(
        "--max-seq-length", type=int, default=128, help="tokens per text (default 128)"
    )
    train = parser.add_argument_group("training")
    train.add_argument("--epochs", type=float, default=3.0, help="default 3 (the paper's)")
    train.add_argument(
        "--max-steps", type=int, default=-1, help="stop after this many steps (overrides --epochs)"
    )
    train.add_argument("--batch-size", type=int, default=64, help="default 64 (the paper's)")
    train.add_argument("--lr", type=float, default=2e-6, help="AdamW learning rate (default 2e-6)")
    train.add_argument(
        "--warmup", type=float, default=0.1, help="warmup share of the steps (default 0.1)"
    )
    train.add_argument("--precision", choices=PRECISIONS, default="auto", help="default auto")
    train.add_argument("--save-steps", type=int, default=500, help="checkpoint every N steps")
    train.add_argument(
        "--keep-checkpoints", type=int, default=2, help="checkpoints kept (default 2)"
    )
    train.add_argument(
        "--resume",
        action="store_true",
        help="continue from the latest checkpoint in --output (step count continues)",
    )
    train.add_argument("--logging-steps", type=int, default=10, help="log the loss every N steps")
    train.add_argument("--seed", type=int, default=42, help="data order and initialization seed")
    train.add_argument("--device", default=None, help="cpu, cuda, ... (default: automatic)")
    return parser


def _check_args(args: argparse.Namespace) -> None:
    for name in ("lstm_hidden", "batch_size", "save_steps", "logging_steps"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.batch_size < 2:
        raise ValueError("--batch-size must be >= 2: the loss uses the batch's other pairs")
    if args.drop_near_identical is not None and not 0.0 < args.drop_near_identical <= 1.0:
        raise ValueError(f"--drop-near-identical must be in (0, 1], got {args.drop_near_identical}")
    if args.max_steps == 0 or args.epochs <= 0:
        raise ValueError("--max-steps must be > 0 (or -1 for --epochs), and --epochs > 0")
    if not 0.0 <= args.warmup < 1.0:
        raise ValueError(f"--warmup must be in [0, 1), got {args.warmup}")


def main(argv: list[str] | None = None) -> int:
    """Run ``paramine train``; return the exit status."""
    args = _parser().parse_args(argv)
    from schemas.manifest import IncompleteDatasetError

    try:
        _check_args(args)
        precision = choose_precision(args.precision)
        data = prepare_data(args)
    except (IncompleteDatasetError, ValueError) as error:
        print(f"paramine train: {error}", file=sys.stderr)
        return 2
    if len(data.train) < args.batch_size:
        print(
            f"paramine train: {len(data.train)} training pairs after filters "
            f"({data.counts}), fewer than one batch of {args.batch_size}",
            file=sys.stderr,
        )
        return 2

    from transformers.trainer_utils import get_last_checkpoint

    os.makedirs(args.output, exist_ok=True)
    checkpoint = get_last_checkpoint(args.output)
    if checkpoint and not args.resume:
        print(
            f"paramine train: {args.output} already has checkpoints ({checkpoint}); pass "
            "--resume to continue from it, or choose another --output",
            file=sys.stderr,
        )
        return 2
    if args.resume and not checkpoint:
        print(f"{args.output}: no checkpoint to resume from; starting at step 0", file=sys.stderr)
    return _train(args, precision, data, checkpoint if args.resume else None)


def _train(
    args: argparse.Namespace, precision: str, data: TrainData, checkpoint: str | None
) -> int:
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from encoders.evaluate import evaluate_model
    from encoders.lstm_pooling import load_encoder
    from encoders.models import resolve_model

    torch.manual_seed(args.seed)  # the LSTM's initial weights
    try:
        resolved = resolve_model(args.base)
    except ValueError as error:
        print(f"paramine train: {error}", file=sys.stderr)
        return 2
    base = load_encoder(resolved.path, device=args.device)
    prefix = default_prefix(base, resolved.prefix)
    eval_pairs = (data.eval["sentence_a"].tolist(), data.eval["sentence_b"].tolist())
    eval_groups = data.eval["pivot"].map(pivot_key).tolist()

    results: dict[str, dict[str, Any]] = {}
    if len(data.eval):
        print(f"scoring the base model on {len(data.eval)} held-out pairs", file=sys.stderr)
        results["base"] = evaluate_model(base, eval_pairs, prefix=prefix, groups=eval_groups)

    model = build_model(
        base,
        args.pooling,
        args.lstm_hidden,
        args.bidirectional,
        args.normalize,
        args.max_seq_length,
        args.device,
    )
    if prefix:
        # Stored as the default prompt, so model.encode(texts) adds it for users.
        model.prompts = {"query": prefix}
        model.default_prompt_name = "query"

    train_dataset = Dataset.from_dict(
        {"anchor": data.train["sentence_a"].tolist(), "positive": data.train["sentence_b"].tolist()}
    )
    training_args = SentenceTransformerTrainingArguments(
        output_dir=args.output,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.lr,
        lr_scheduler_type="linear",
        warmup_steps=args.warmup,  # a float below 1 is a share of the steps
        optim="adamw_torch",
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        save_strategy="steps",
        save_steps=args.save_steps,
        save_total_limit=args.keep_checkpoints,
        logging_steps=args.logging_steps,
        seed=args.seed,
        data_seed=args.seed,
        prompts=prefix or None,
        report_to="none",
        dataloader_pin_memory=torch.cuda.is_available(),
        disable_tqdm=False,
        use_cpu=args.device == "cpu",
    )
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        loss=MultipleNegativesRankingLoss(model),
    )
    started = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=checkpoint)
    wall = time.perf_counter() - started
    model.save(args.output, create_model_card=False)

    if len(data.eval):
        print(f"scoring the trained model on {len(data.eval)} held-out pairs", file=sys.stderr)
        results["trained"] = evaluate_model(model, eval_pairs, groups=eval_groups)

    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    summary = {
        "dataset": args.dataset,
        "base": {
            "spec": args.base,
            "path": resolved.path,
            "model_id": resolved.model_id,
            "revision": resolved.revision,
            "prefix": prefix,
        },
        "manifest": {
            "created_at": data.manifest.created_at,
            "code_version": data.manifest.code_version,
            "model": data.manifest.model,
            "threshold": data.manifest.threshold,
            "rows": data.manifest.rows,
        },
        "counts": data.counts,
        "settings": {
            key: value for key, value in vars(args).items() if key not in ("dataset", "output")
        }
        | {"precision": precision, "resumed_from": checkpoint},
        "training": {
            "global_step": trainer.state.global_step,
            "epoch": trainer.state.epoch,
            "first_logged_loss": losses[0] if losses else None,
            "last_logged_loss": losses[-1] if losses else None,
            "train_runtime_s": output.metrics.get("train_runtime"),
            "samples_per_second": output.metrics.get("train_samples_per_second"),
            "steps_per_second": output.metrics.get("train_steps_per_second"),
            "mean_loss": output.metrics.get("train_loss"),
            "wall_s": wall,
            "device": str(model.device),
        },
        "results": results,
    }
    with open(os.path.join(args.output, "paramine_training.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, ensure_ascii=False, default=str)
    with open(os.path.join(args.output, "README.md"), "w", encoding="utf-8") as f:
        f.write(model_card(summary))
    print(f"saved {args.output} (step {trainer.state.global_step})", file=sys.stderr)
    return 0


def model_card(summary: dict[str, Any]) -> str:
    """Return the README.md of a trained model: data, settings, results."""
    from encoders.evaluate import results_table

    settings = summary["settings"]
    counts = summary["counts"]
    training = summary["training"]
    pooling = (
        f"LSTM pooling (hidden {settings['lstm_hidden']}"
        f"{', bidirectional' if settings['bidirectional'] else ''})"
        if settings["pooling"] == "lstm"
        else "mean pooling"
    )
    load_lines = [
        "```python",
        "from sentence_transformers import SentenceTransformer",
        "",
        'model = SentenceTransformer("path/to/this/folder")',
        'embeddings = model.encode(["Ala ma kota."])',
        "```",
    ]
    if settings["pooling"] == "lstm":
        load_lines += [
            "",
            "The LSTM pooling module is `encoders.lstm_pooling.LSTMPooling`: install paramine "
            "(`pip install paramine`) where the model is loaded. With sentence-transformers 6, "
            "which asks `trust_remote_code=True` for any module class outside its own package, "
            "load it with `encoders.lstm_pooling.load_encoder(path)` instead.",
        ]
    if summary["base"]["prefix"]:
        load_lines += [
            "",
            f"The prefix {summary['base']['prefix']!r} is stored as the default prompt: "
            "`encode` adds it.",
        ]
    rows = (
        [(f"{summary['base']['spec']} (base)", summary["results"]["base"])]
        if ("base" in summary["results"])
        else []
    )
    if "trained" in summary["results"]:
        rows.append(("this model", summary["results"]["trained"]))
    dropped = ", ".join(f"{k}: {v}" for k, v in counts["train_dropped"].items()) or "none"
    manifest = summary["manifest"]

    def fmt(value: Any) -> str:
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    lines = [
        "---",
        "library_name: sentence-transformers",
        "pipeline_tag: sentence-similarity",
        "tags: [sentence-transformers, paraphrase, paramine]",
        "---",
        "",
        f"# Sentence encoder trained by paramine on {summary['dataset']}",
        "",
        f"{summary['base']['spec']} ({summary['base']['model_id']}) with {pooling}"
        f"{' and L2 normalization' if settings['normalize'] else ''}, fine-tuned on mined "
        "paraphrase pairs with the multiple-negatives ranking loss (Dadas 2022).",
        "",
        "## Use",
        "",
        *load_lines,
        "",
        "## Data",
        "",
        f"- Dataset: `{summary['dataset']}`",
        f"- Mined: {manifest['created_at']} by paramine {manifest['code_version']}; "
        f"mining model `{json.dumps(manifest['model'], sort_keys=True)}`; "
        f"threshold `{json.dumps(manifest['threshold'], sort_keys=True)}`; "
        f"rows `{json.dumps(manifest['rows'], sort_keys=True)}`",
        f"- Rows read: {counts['rows_read']}; held out (by pivot hash, share "
        f"{settings['eval_share']}): {counts['eval_pivots_rows']}, of which "
        f"{counts['eval_rows_scored']} scored",
        f"- Training rows: {counts['train_rows_before_filters']} before filters, "
        f"dropped {dropped}; used {counts['train_rows']}",
        "",
        "## Settings",
        "",
        "| setting | value |",
        "|---|---|",
        *(f"| {key} | {fmt(value)} |" for key, value in sorted(settings.items())),
        "",
        "## Training",
        "",
        f"- Steps: {training['global_step']} (epoch {fmt(training['epoch'])}) on "
        f"{training['device']}",
        f"- Loss: mean {fmt(training['mean_loss'])} over this run; first logged "
        f"{fmt(training['first_logged_loss'])}, last logged {fmt(training['last_logged_loss'])}",
        f"- This run: {fmt(training['train_runtime_s'])} s, "
        f"{fmt(training['samples_per_second'])} samples/s, "
        f"{fmt(training['steps_per_second'])} steps/s",
        "",
        "## Results: paraphrase retrieval on the held-out pivots",
        "",
        "For each sentence_a, its sentence_b is ranked among all held-out sentence_b by cosine; "
        "the other candidates of the same pivot are not counted against it.",
        "",
        results_table(rows) if rows else "No held-out pairs (`--eval-share 0`).",
        "",
    ]
    return "\n".join(lines)
