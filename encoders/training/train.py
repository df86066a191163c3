"""``paramine train``: fine-tune a sentence encoder on a mined paraphrase dataset.

The recipe of Dadas (2022): a pretrained Transformer, its pooling replaced by
an LSTM (:mod:`paramine.encoders.lstm_pooling`), trained with the multiple-negatives
ranking loss on (sentence_a, sentence_b) pairs with no text twice in a batch;
AdamW, lr 2e-6, linear decay after 10% warmup, batch 64, 3 epochs.

Training runs through sentence-transformers' ``SentenceTransformerTrainer``
(which needs ``datasets`` and ``accelerate``): checkpoints, resume, mixed
precision and the progress bar come from it.

The held-out split is :mod:`paramine.encoders.evaluation.holdout`'s. The base model and
the trained one are scored by the same evaluators
(:mod:`paramine.encoders.evaluation.evaluate`): paraphrase retrieval on the held-out
pivots, and bitext retrieval and STS on files the user gives. The output
folder holds the model only; checkpoints live in their own folder.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.evaluate import (
    MIN_RETRIEVAL_PAIRS,
    build_tasks,
    evaluate_model,
    results_table,
)
from paramine.encoders.training.config import POOLINGS, PRECISIONS, TrainConfig
from paramine.encoders.training.data import (
    EvalData,
    TrainData,
    prepare_data,
    read_evaluation,
)
from paramine.encoders.training.model_card import SUMMARY_FILE, save_model
from paramine.schemas.errors import ModelError, OutputError, UsageError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


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
    from paramine.encoders.lstm_pooling import LSTMPooling
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    transformer = base[0]
    if not isinstance(transformer, Transformer):
        raise ModelError(
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
        raise UsageError(f"--pooling must be one of {', '.join(POOLINGS)}; got {pooling!r}")
    modules = [transformer, head] + ([Normalize()] if normalize else [])
    return SentenceTransformer(modules=modules, device=device)


def choose_precision(precision: str) -> str:
    """Resolve ``auto`` to bf16/fp16 on a GPU and fp32 on CPU; check the rest."""
    import torch

    if precision not in PRECISIONS:
        raise UsageError(f"--precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    cuda = torch.cuda.is_available()
    if precision == "auto":
        if not cuda:
            return "fp32"
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    if precision in ("bf16", "fp16") and not cuda:
        raise UsageError(f"--precision {precision} needs a CUDA GPU; use fp32 (or auto) on CPU")
    return precision


def default_prefix(base: SentenceTransformer, resolved_prefix: str) -> str:
    """Return the prefix the base model expects: the resolver's, else its default prompt."""
    if resolved_prefix:
        return resolved_prefix
    name = getattr(base, "default_prompt_name", None)
    return str(base.prompts.get(name, "")) if name else ""


def _check_output(output: str) -> None:
    """Refuse an output folder that holds anything but an earlier paramine model."""
    if not os.path.exists(output):
        return
    if not os.path.isdir(output):
        raise OutputError(f"--output {output} is a file; give a folder for the model")
    if os.listdir(output) and not os.path.isfile(os.path.join(output, SUMMARY_FILE)):
        raise OutputError(
            f"--output {output} is not empty and holds no paramine model ({SUMMARY_FILE} "
            "is missing); give an empty or new folder"
        )


def main(argv: list[str] | None = None) -> int:
    """Run ``paramine train``; return the exit status."""
    from paramine.schemas.options import parse_config

    description = (
        "Fine-tune a sentence encoder (Transformer + LSTM pooling) on a mined paraphrase "
        "dataset with the multiple-negatives ranking loss (Dadas 2022)."
    )
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    # Errors reach the user through the CLI's one boundary (pipelines/cli.py).
    config = parse_config(
        TrainConfig, "paramine train", description, sys.argv[1:] if argv is None else argv
    )
    return _run(config)


def _run(config: TrainConfig) -> int:
    from transformers.trainer_utils import get_last_checkpoint

    _check_output(config.output)
    precision = choose_precision(config.precision)
    evaluation = read_evaluation(config)
    data = prepare_data(config, evaluation)
    if len(data.train) < config.batch_size:
        raise UsageError(
            f"{len(data.train)} training pairs after filters ({data.counts}), fewer than one "
            f"batch of {config.batch_size}; lower --batch-size or --eval-share, or relax filters"
        )
    if 0 < len(data.eval) < MIN_RETRIEVAL_PAIRS:
        log.warning(
            "only %d held-out pairs for paraphrase retrieval (fewer than %d): its figures are "
            "too coarse to compare models; raise --eval-share, or add --eval-bitext / "
            "--eval-sts",
            len(data.eval),
            MIN_RETRIEVAL_PAIRS,
        )

    checkpoints = config.checkpoints
    checkpoint = get_last_checkpoint(checkpoints) if os.path.isdir(checkpoints) else None
    if checkpoint and not config.resume:
        raise OutputError(
            f"{checkpoints} already has checkpoints ({checkpoint}); pass --resume to "
            "continue from it, or choose another --output / --checkpoint-dir"
        )
    if config.resume and not checkpoint:
        log.warning("%s: no checkpoint to resume from; starting at step 0", checkpoints)
    return _train(config, precision, data, checkpoint if config.resume else None, evaluation)


def _train(
    config: TrainConfig,
    precision: str,
    data: TrainData,
    checkpoint: str | None,
    evaluation: EvalData,
) -> int:
    import torch
    from datasets import Dataset
    from paramine.encoders.lstm_pooling import load_encoder
    from paramine.encoders.models.folder_check import check_local_folder
    from paramine.encoders.models.resolve import resolve_model
    from sentence_transformers import (
        SentenceTransformerTrainer,
    )
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    torch.manual_seed(config.seed)  # the LSTM's initial weights
    resolved = resolve_model(config.base, flag="--base")
    check_local_folder(resolved, config.base, "--base")
    base = load_encoder(resolved.path, device=config.device)
    prefix = default_prefix(base, resolved.prefix)
    tasks = build_tasks(data.eval, evaluation.bitexts, evaluation.sts, config.eval_batch_size)

    results: dict[str, dict[str, float]] = {}
    suite: dict[str, dict[str, Any]] = {}
    if tasks:
        log.info("scoring the base model")
        results["base"] = evaluate_model(base, tasks, prefix=prefix)
    if evaluation.suite is not None:
        log.info("scoring the base model on the suite %s", evaluation.suite.name)
        suite["base"] = _on_suite(base, evaluation, prefix, config.eval_batch_size)

    model = build_model(
        base,
        config.pooling,
        config.lstm_hidden,
        config.bidirectional,
        config.normalize,
        config.max_seq_length,
        config.device,
    )
    if prefix:
        # Stored as the default prompt, so model.encode(texts) adds it for users.
        model.prompts = {"query": prefix}
        model.default_prompt_name = "query"
    card = model.model_card_data
    card.local_files_only = True  # the card must not reach the hub for dataset facts
    card.model_name = f"{config.base} with {config.pooling} pooling, trained by paramine"
    card.train_datasets = [{"name": f"paramine pairs: {config.dataset}"}]
    card.tags = [*card.tags, "paramine", "paraphrase"]

    train_dataset = Dataset.from_dict(
        {"anchor": data.train["sentence_a"].tolist(), "positive": data.train["sentence_b"].tolist()}
    )
    training_args = _training_arguments(config, precision, prefix, len(data.train))
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        loss=MultipleNegativesRankingLoss(model),
    )
    started = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=checkpoint)
    wall = time.perf_counter() - started

    if tasks:
        log.info("scoring the trained model")
        # The evaluators also record their scores in the model card's data.
        results["trained"] = evaluate_model(
            model, tasks, prefix, trainer.state.epoch or 0.0, trainer.state.global_step
        )
    if evaluation.suite is not None:
        log.info("scoring the trained model on the suite %s", evaluation.suite.name)
        suite["trained"] = _on_suite(model, evaluation, prefix, config.eval_batch_size)

    summary = _training_summary(
        config, precision, data, resolved, prefix, checkpoint, trainer, output, wall, results
    )
    names = [f"{config.base} (base)", "trained"]
    tables = []
    if tasks:
        columns = [(names[0], results["base"]), (names[1], results.get("trained", {}))]
        tables.append(results_table(columns, tasks))
    if evaluation.suite is not None:
        from paramine.encoders.evaluation.suite_eval import suite_table

        summary["suite"] = {"name": evaluation.suite.name, **suite}
        rows = [(names[0], suite["base"]), (names[1], suite["trained"])]
        tables.append(f"Suite {evaluation.suite.name}:\n\n" + suite_table(rows, evaluation.suite))
    table = "\n\n".join(tables)
    save_model(model, config.output, summary, table)
    print(table or "no evaluation: --eval-share 0 and no --eval-bitext, --eval-sts or --suite")
    log.info(
        "saved %s (step %d, epoch %.2f); checkpoints in %s",
        config.output,
        trainer.state.global_step,
        trainer.state.epoch or 0.0,
        config.checkpoints,
    )
    return 0


def _training_arguments(config: TrainConfig, precision: str, prefix: str, train_pairs: int) -> Any:
    """The trainer's arguments: the recipe, the checkpoints, the logging."""
    import torch
    from sentence_transformers import SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    steps_per_epoch = math.ceil(train_pairs / config.batch_size)
    # With --max-steps the trainer ignores num_train_epochs, but the model card
    # lists it: give it the epochs those steps really make.
    epochs = config.max_steps / steps_per_epoch if config.max_steps > 0 else config.epochs
    checkpoints = config.checkpoints
    return SentenceTransformerTrainingArguments(
        output_dir=checkpoints,
        num_train_epochs=epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.lr,
        lr_scheduler_type="linear",
        warmup_steps=config.warmup,  # a float below 1 is a share of the steps
        optim="adamw_torch",
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=config.save_total_limit,
        logging_steps=config.logging_steps,
        seed=config.seed,
        data_seed=config.seed,
        prompts=prefix or None,
        report_to="none",
        dataloader_pin_memory=torch.cuda.is_available(),
        disable_tqdm=False,
        use_cpu=config.device == "cpu",
    )


def _training_summary(
    config: TrainConfig,
    precision: str,
    data: TrainData,
    resolved: Any,
    prefix: str,
    checkpoint: str | None,
    trainer: Any,
    output: Any,
    wall: float,
    results: dict[str, dict[str, float]],
) -> dict[str, Any]:
    """What ``paramine_training.json`` records of a run: data, settings, training, results."""
    checkpoints = config.checkpoints
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    return {
        "dataset": config.dataset,
        "base": {
            "spec": config.base,
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
            key: value
            for key, value in dataclasses.asdict(config).items()
            if key not in ("dataset", "output")
        }
        | {"precision": precision, "resumed_from": checkpoint, "checkpoint_dir": checkpoints},
        "training": {
            "global_step": trainer.state.global_step,
            "epoch": trainer.state.epoch,
            "train_pairs": len(data.train),
            "first_logged_loss": losses[0] if losses else None,
            "last_logged_loss": losses[-1] if losses else None,
            "train_runtime_s": output.metrics.get("train_runtime"),
            "samples_per_second": output.metrics.get("train_samples_per_second"),
            "steps_per_second": output.metrics.get("train_steps_per_second"),
            "mean_loss": output.metrics.get("train_loss"),
            "wall_s": wall,
            "device": str(trainer.model.device),
        },
        "results": results,
    }


def _on_suite(
    model: SentenceTransformer, evaluation: EvalData, prefix: str, batch_size: int
) -> dict[str, Any]:
    """The suite's figures for ``model`` (frozen vectors, probes), with the time they took."""
    from paramine.encoders.evaluation.suite_eval import evaluate_on_suite

    assert evaluation.suite is not None
    started = time.perf_counter()
    result = evaluate_on_suite(model, evaluation.suite, evaluation.suite_root, prefix, batch_size)
    return {**result, "seconds": round(time.perf_counter() - started, 1)}
