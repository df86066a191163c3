"""One seed of ``paramine train``: the model to train, the trainer's arguments, the run's facts.

:mod:`paramine.encoders.training.train` repeats this over the seeds and scores
what it returns.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Any

from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.seeds import SeedPlace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


def _seed_model(
    config: TrainConfig, base: SentenceTransformer, prefix: str, seed: int
) -> SentenceTransformer:
    """The model to train: ``base`` with the recipe's pooling head, seeded, and its card."""
    import torch
    from paramine.encoders.training.modeling import build_model, freeze_word_embeddings

    torch.manual_seed(seed)  # the head's initial weights
    model = build_model(
        base,
        config.pooling,
        config.lstm_hidden,
        config.bidirectional,
        config.normalize,
        config.max_seq_length,
        config.device,
    )
    if config.embeddings == "freeze":
        freeze_word_embeddings(model)
    if prefix:
        # Stored as the default prompt, so model.encode(texts) adds it for users.
        model.prompts = {"query": prefix}
        model.default_prompt_name = "query"
    card = model.model_card_data
    card.local_files_only = True  # the card must not reach the hub for dataset facts
    card.model_name = f"{config.base} with {config.pooling} pooling, trained by paramine"
    card.train_datasets = [{"name": f"paramine pairs: {config.dataset}"}]
    card.tags = [*card.tags, "paramine", "paraphrase"]
    return model


def _peak_gpu_memory_mib() -> float | None:
    import torch

    if not torch.cuda.is_available():
        return None
    return round(torch.cuda.max_memory_allocated() / 2**20, 1)


def train_seed(
    config: TrainConfig,
    precision: str,
    base: SentenceTransformer,
    prefix: str,
    columns: dict[str, list[str]],
    place: SeedPlace,
    checkpoint: str | None,
    base_dev: dict[int, dict[str, Any]],
    more_callbacks: Sequence[Any] = (),
) -> tuple[SentenceTransformer, dict[str, Any]]:
    """Build the model from ``base`` and train it with ``place.seed``; return it and its facts.

    ``base_dev``: step 0's dev figures from an earlier seed, when step 0 is the base.
    ``more_callbacks``: the trainer's too (``benchmarks/quality/recheck_judges.py`` stops runs).
    """
    from datasets import Dataset
    from paramine.encoders.training.checkpoints import MarkComplete, checkpoint_step
    from paramine.encoders.training.modeling import learning_rate_mapping
    from paramine.encoders.training.selection import dev_selection
    from sentence_transformers import SentenceTransformerTrainer

    model = _seed_model(config, base, prefix, place.seed)
    mapping = learning_rate_mapping(model, config.lr, config.head_lr)
    selection = dev_selection(config, model, prefix, place.checkpoints, checkpoint, base_dev)
    callbacks: list[Any] = [MarkComplete(config.save_total_limit), *more_callbacks]
    callbacks += [] if selection is None else [selection]
    columns = dict(columns)  # the loss may add the rows' numbers
    loss = _loss(config, model, columns, callbacks)
    dataset = Dataset.from_dict(columns)
    args = _training_arguments(config, precision, prefix, len(dataset), place, mapping)
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=dataset, loss=loss, callbacks=callbacks
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    output = trainer.train(resume_from_checkpoint=checkpoint)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    state = trainer.state
    steps_run = state.global_step - (checkpoint_step(checkpoint) if checkpoint else 0)
    # Selection scores inside trainer.train: its time is reported apart from the steps'.
    selection_cpu = selection.cpu_s if selection is not None else 0.0
    losses = [entry["loss"] for entry in state.log_history if "loss" in entry]
    log.info(
        "trained seed %d to step %d (epoch %.2f); checkpoints in %s",
        place.seed,
        state.global_step,
        state.epoch or 0.0,
        place.checkpoints,
    )
    run: dict[str, Any] = {
        "settings": {
            "precision": precision,
            "seed": place.seed,
            "resumed_from": checkpoint,
            "checkpoint_dir": place.checkpoints,
        },
        "training": {
            "global_step": state.global_step,
            "epoch": state.epoch,
            "train_pairs": len(dataset),
            "first_logged_loss": losses[0] if losses else None,
            "last_logged_loss": losses[-1] if losses else None,
            "train_runtime_s": output.metrics.get("train_runtime"),
            "samples_per_second": output.metrics.get("train_samples_per_second"),
            "steps_per_second": output.metrics.get("train_steps_per_second"),
            "mean_loss": output.metrics.get("train_loss"),
            "wall_s": wall,
            "cpu_s": cpu,
            "selection_cpu_s": selection_cpu,
            "cpu_s_per_step": (cpu - selection_cpu) / steps_run if steps_run else None,
            "device": str(trainer.model.device),
            "peak_gpu_memory_mib": _peak_gpu_memory_mib(),
        },
    }
    if selection is not None:
        run["selection"] = selection.summary()
    set_aside = getattr(loss, "set_aside", None)
    if set_aside is not None:
        run["training"]["rows_set_aside_by_recheck"] = len(set_aside)
    return model, run


def _loss(
    config: TrainConfig,
    model: SentenceTransformer,
    columns: dict[str, list[Any]],
    callbacks: list[Any],
) -> Any:
    """The recipe's loss; small-loss training adds the callback that tells it the step.

    When the rows are judged again after the first epoch, ``columns`` gains
    the rows' numbers (``small_loss.ROW_COLUMN``), which the loss reads.
    """
    from paramine.encoders.training.modeling import make_loss

    # The hardest rows' share grows over the first epoch (small_loss.py).
    rows = len(columns["anchor"])
    epoch_steps = -(-rows // config.batch_size)
    directions, drop = config.loss_directions, config.drop_hardest
    recheck = config.recheck_false_accept
    loss = make_loss(
        model, config.loss, config.mini_batch_size, directions, drop, epoch_steps, recheck
    )
    if drop or recheck < 1.0:
        from paramine.encoders.training.small_loss import ROW_COLUMN, FollowSteps

        if recheck < 1.0:
            columns[ROW_COLUMN] = list(range(rows))
            callbacks.append(FollowSteps(loss, columns["anchor"], columns["positive"]))
        else:
            callbacks.append(FollowSteps(loss))
    return loss


def training_epochs(config: TrainConfig, steps_per_epoch: int) -> float:
    """``--epochs``, or more where they make fewer than ``--min-steps`` steps."""
    return max(config.epochs, config.min_steps / steps_per_epoch)


def _training_arguments(
    config: TrainConfig,
    precision: str,
    prefix: str,
    train_pairs: int,
    place: SeedPlace,
    learning_rate_mapping: dict[str, float],
) -> Any:
    """The trainer's arguments: the recipe, the checkpoints, the logging."""
    import torch
    from paramine.encoders.training.batching import LengthGroupedNoDuplicatesSampler
    from sentence_transformers import SentenceTransformerTrainingArguments

    steps_per_epoch = math.ceil(train_pairs / config.batch_size)
    # With --max-steps the trainer ignores num_train_epochs, but the model card
    # lists it: give it the epochs those steps really make.
    epochs = (
        config.max_steps / steps_per_epoch
        if config.max_steps > 0
        else training_epochs(config, steps_per_epoch)
    )
    return SentenceTransformerTrainingArguments(
        output_dir=place.checkpoints,
        num_train_epochs=epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.lr,
        learning_rate_mapping=learning_rate_mapping,
        lr_scheduler_type="linear",
        warmup_steps=config.warmup,  # a float below 1 is a share of the steps
        optim="adamw_torch",
        # Batches of like length (padding to a long line's length cost a step
        # 21 s instead of 1.2 here), no text twice in a batch.
        batch_sampler=LengthGroupedNoDuplicatesSampler,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        save_strategy="steps",
        save_steps=config.save_steps,
        # Pruned by MarkComplete after each checkpoint is marked complete:
        # the trainer's own pruning runs before, and could leave none complete.
        save_total_limit=None,
        logging_steps=config.logging_steps,
        seed=place.seed,
        data_seed=place.seed,
        prompts=prefix or None,
        report_to="none",
        dataloader_pin_memory=torch.cuda.is_available(),
        disable_tqdm=config.quiet,
        # Said outright where there is no GPU: the trainer refuses bf16 on a CPU it was not told of.
        use_cpu=config.device == "cpu" or not torch.cuda.is_available(),
    )
