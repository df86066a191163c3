"""``paramine train``: fine-tune a sentence encoder on a mined paraphrase dataset.

``--recipe paper`` (the default) is Dadas (2022): a pretrained Transformer,
its pooling replaced by an LSTM (:mod:`paramine.encoders.modules.lstm_pooling`),
trained with the multiple-negatives ranking loss on (sentence_a, sentence_b)
pairs with no text twice in a batch; AdamW, lr 2e-6, linear decay after 10%
warmup, batch 64, 3 epochs. ``--recipe small`` is for a few thousand pairs
and a base that is already a sentence encoder
(:mod:`paramine.encoders.training.recipes`).

Training runs through sentence-transformers' ``SentenceTransformerTrainer``
(which needs ``datasets`` and ``accelerate``): mixed precision, the progress
bar and the checkpoint files come from it; paramine marks checkpoints
complete and resumes from the newest complete one
(:mod:`paramine.encoders.training.checkpoints`), mines hard negatives
(:mod:`~paramine.encoders.training.hard_negatives`), selects on dev
(:mod:`~paramine.encoders.training.selection`) and repeats over seeds
(:mod:`~paramine.encoders.training.seeds`).

The held-out split is :mod:`paramine.encoders.evaluation.holdout`'s. The base model and
the trained one are scored by the same evaluators
(:mod:`paramine.encoders.evaluation.evaluate`): paraphrase retrieval on the held-out
pivots, and bitext retrieval and STS on files the user gives, before
training; the suite's test table after training, for both, once. The output
folder holds the model only; checkpoints live in their own folder.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.evaluate import (
    MIN_RETRIEVAL_PAIRS,
    build_tasks,
    evaluate_model,
    results_table,
)
from paramine.encoders.training.base_model import load_base
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.data import (
    EvalData,
    TrainData,
    prepare_data,
    read_evaluation,
)
from paramine.encoders.training.hard_negatives import training_rows
from paramine.encoders.training.model_card import SUMMARY_FILE, save_model, training_summary
from paramine.encoders.training.seed_training import train_seed
from paramine.encoders.training.seeds import SeedPlace, seed_places
from paramine.schemas.errors import OutputError, UsageError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


def _check_output(config: TrainConfig) -> None:
    """Refuse an output folder that holds anything but an earlier paramine model.

    With ``--seeds`` above 1, an earlier one-seed model there is removed
    first: its files would otherwise sit beside the seeds' folders.
    """
    output = config.output
    if not os.path.exists(output):
        return
    if not os.path.isdir(output):
        raise OutputError(f"--output {output} is a file; give a folder for the model")
    if os.listdir(output) and not os.path.isfile(os.path.join(output, SUMMARY_FILE)):
        raise OutputError(
            f"--output {output} is not empty and holds no paramine model ({SUMMARY_FILE} "
            "is missing); give an empty or new folder"
        )
    if config.seeds > 1 and os.path.isfile(os.path.join(output, "modules.json")):
        shutil.rmtree(output)


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
    return run_training(config)


def run_training(config: TrainConfig) -> int:
    """Train (every seed), score and save: ``paramine train`` for a config built in Python."""
    from paramine.encoders.training.checkpoints import resume_from
    from paramine.encoders.training.modeling import choose_precision

    _check_output(config)
    precision = choose_precision(config.precision, config.device)
    evaluation = read_evaluation(config)
    if config.select_on == "dev" and evaluation.suite is not None:
        from paramine.encoders.training.selection import selected_tasks

        selected_tasks(evaluation.suite, config.select_tasks)  # names checked before training
    data = prepare_data(config, evaluation)
    rows = len(training_rows(data.train, config.train_on, data.aligned).anchors)
    if rows < config.batch_size:
        raise UsageError(
            f"{rows} training rows after filters ({data.counts}), fewer than one batch of "
            f"{config.batch_size}; lower --batch-size or --eval-share, or relax filters"
        )
    if 0 < len(data.eval) < MIN_RETRIEVAL_PAIRS:
        log.warning(
            "only %d held-out pairs for paraphrase retrieval (fewer than %d): its figures are "
            "too coarse to compare models; raise --eval-share, or add --eval-bitext / "
            "--eval-sts",
            len(data.eval),
            MIN_RETRIEVAL_PAIRS,
        )
    places = seed_places(config)
    starts = [resume_from(place.checkpoints, config.resume) for place in places]
    return _train(config, precision, data, evaluation, places, starts)


def _train(
    config: TrainConfig,
    precision: str,
    data: TrainData,
    evaluation: EvalData,
    places: list[SeedPlace],
    starts: list[str | None],
) -> int:
    """Score the base, train each seed, score the base's suite, write and print the tables."""
    from paramine.encoders.evaluation.suite_eval import model_encoder
    from paramine.encoders.modules.lstm_pooling import load_encoder
    from paramine.encoders.training.hard_negatives import training_columns
    from paramine.encoders.training.judged_apart import judge_apart

    base, base_facts = load_base(config)
    resolved_path, prefix = base_facts["path"], base_facts["prefix"]
    batch = config.eval_batch_size
    tasks = build_tasks(data.eval, evaluation.bitexts, evaluation.sts, batch)
    base_results: dict[str, float] = {}
    if tasks:
        log.info("scoring the base model")
        base_results = evaluate_model(base, tasks, prefix=prefix)
    columns, pivots, mined = training_columns(config, data, model_encoder(base, prefix, batch))
    columns, seed_config, apart = judge_apart(config, precision, base_facts, columns, pivots)

    runs: dict[int, dict[str, Any]] = {}
    kept: SentenceTransformer | None = None
    as_base: dict[int, tuple[SeedPlace, SentenceTransformer]] = {}  # selection kept the base
    base_dev: dict[int, dict[str, Any]] = {}  # step 0's dev figures, when step 0 is the base
    for i, (place, checkpoint) in enumerate(zip(places, starts, strict=True)):
        if i:  # training changed the base's Transformer in place: a fresh one per seed
            base = load_encoder(resolved_path, device=config.device)
        model, run = train_seed(
            seed_config, precision, base, prefix, columns, place, checkpoint, base_dev
        )
        if apart is not None:
            run["training"]["rows_set_aside_by_recheck"] = apart
        del base
        base_dev = base_dev or _base_dev_scores(config, run)
        if mined is not None:
            run["hard_negatives"] = mined
        run["results"] = _results(model, run, tasks, prefix, base_results, place.seed)
        runs[place.seed] = run
        if evaluation.suite is not None and _kept_the_base(config, run):
            log.info(
                "selection kept step 0 of seed %d, where %s pooling gives the base's vectors: "
                "its suite figures are the base's, scored once below",
                place.seed,
                config.pooling,
            )
            as_base[place.seed] = (place, model)
            continue
        if evaluation.suite is not None:
            log.info("scoring the trained model (seed %d) on the suite", place.seed)
            run["suite"] = {"trained": _on_suite(model, evaluation, prefix, config.eval_batch_size)}
        if len(places) > 1:
            _save_seed(config, data, base_facts, place, model, run, tasks, evaluation, None)
        else:
            kept = model

    base_suite = None
    if evaluation.suite is not None:
        base_suite = _base_on_suite(config, base_facts, evaluation)
        for seed, (place, model) in as_base.items():
            runs[seed]["suite"] = {"trained": {**base_suite, "same_as_base": True}}
            if len(places) > 1:
                _save_seed(
                    config, data, base_facts, place, model, runs[seed], tasks, evaluation, None
                )
            else:
                kept = model
    if kept is not None:
        place, run = places[0], runs[places[0].seed]
        table = _save_seed(
            config, data, base_facts, place, kept, run, tasks, evaluation, base_suite
        )
    else:
        table = _finish_seeds(config, base_facts, runs, base_results, base_suite, tasks, evaluation)
    print(table or "no evaluation: --eval-share 0 and no --eval-bitext, --eval-sts or --suite")
    return 0


def _kept_the_base(config: TrainConfig, run: dict[str, Any]) -> bool:
    """Whether dev selection kept step 0 of a pooling that starts as the base, vector for vector."""
    from paramine.encoders.training.modeling import STARTS_AS_BASE

    selection = run.get("selection") or {}
    return config.pooling in STARTS_AS_BASE and selection.get("kept_step") == 0


def _base_dev_scores(config: TrainConfig, run: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """``{0: step 0's dev figures}`` when step 0 is the base, vector for vector; else empty.

    Every seed starts from the same weights then, so its step 0 need not be
    scored again (a dev score of the pl suite: 3-6 min on a 2-core CPU).
    """
    from paramine.encoders.training.modeling import STARTS_AS_BASE

    if config.pooling not in STARTS_AS_BASE:
        return {}
    for entry in (run.get("selection") or {}).get("history", []):
        if entry["step"] == 0:
            return {0: {"tasks": entry["tasks"], "average": entry["average"]}}
    return {}


def _results(
    model: SentenceTransformer,
    run: dict[str, Any],
    tasks: list[Any],
    prefix: str,
    base_results: dict[str, float],
    seed: int,
) -> dict[str, Any]:
    """The base's and the trained model's figures on the held-out tasks; {} with no tasks."""
    if not tasks:
        return {}
    log.info("scoring the trained model (seed %d)", seed)
    state = run["training"]
    # The evaluators also record their scores in the model card's data.
    trained = evaluate_model(model, tasks, prefix, state["epoch"] or 0.0, state["global_step"])
    return {"base": base_results, "trained": trained}


def _base_on_suite(
    config: TrainConfig, base_facts: dict[str, Any], evaluation: EvalData
) -> dict[str, Any]:
    """The base's suite figures: after training, so the test table is computed once per model.

    Kept in the paramine cache and read back on the next run with the same
    base (``suite_cache``), unless ``--no-suite-cache``.
    """
    from paramine.encoders.evaluation.suite_eval import scored_on_suite, trainer_encoding
    from paramine.encoders.modules.lstm_pooling import load_encoder

    suite = evaluation.suite
    assert suite is not None
    prefix = base_facts["prefix"]

    def score() -> dict[str, Any]:
        log.info("scoring the base model on the suite %s", suite.name)
        fresh = load_encoder(base_facts["path"], device=config.device)
        return _on_suite(fresh, evaluation, prefix, config.eval_batch_size)

    return scored_on_suite(
        base_facts["revision"],
        trainer_encoding(config.device, prefix),
        suite,
        evaluation.suite_data,
        f"{config.base} (base)",
        score,
        not config.no_suite_cache,
    )


def _save_seed(
    config: TrainConfig,
    data: TrainData,
    base_facts: dict[str, Any],
    place: SeedPlace,
    model: SentenceTransformer,
    run: dict[str, Any],
    tasks: list[Any],
    evaluation: EvalData,
    base_suite: dict[str, Any] | None,
) -> str:
    """Write one seed's model folder with its card and summary; return its tables."""
    from paramine.encoders.evaluation.suite_eval import suite_table, suite_title, trainer_encoding

    summary = training_summary(config, data, base_facts, run, run["results"])
    names = [f"{config.base} (base)", "trained"]
    tables = []
    if tasks:
        results = run["results"]
        columns = [(names[0], results["base"]), (names[1], results["trained"])]
        tables.append(results_table(columns, tasks))
    if evaluation.suite is not None:
        encoding = trainer_encoding(config.device, base_facts["prefix"])
        suite = {"name": evaluation.suite.name, "encoding": encoding, **run["suite"]}
        rows = [(names[1], run["suite"]["trained"])]
        if base_suite is not None:
            suite["base"] = base_suite
            rows.insert(0, (names[0], base_suite))
        summary["suite"] = suite
        title = suite_title(evaluation.suite.name, encoding)
        tables.append(f"{title}\n\n" + suite_table(rows, evaluation.suite))
    table = "\n\n".join(tables)
    save_model(model, place.output, summary, table)
    log.info("saved %s", place.output)
    return table


def _finish_seeds(
    config: TrainConfig,
    base_facts: dict[str, Any],
    runs: dict[int, dict[str, Any]],
    base_results: dict[str, float],
    base_suite: dict[str, Any] | None,
    tasks: list[Any],
    evaluation: EvalData,
) -> str:
    """Write OUTPUT's summary of several seeds (mean and sample std); return its tables."""
    from paramine.encoders.evaluation.suite_eval import suite_table, suite_title, trainer_encoding
    from paramine.encoders.training.seeds import seeds_summary, write_seeds_summary

    summary = seeds_summary(runs, base_results, base_suite)
    summary = {"dataset": config.dataset, "base": config.base, **summary}
    n = len(runs)
    tables = []
    if tasks:
        columns = [(f"{config.base} (base)", base_results)]
        columns += [(f"seed {seed}", run["results"]["trained"]) for seed, run in runs.items()]
        columns += [
            (f"mean of {n}", summary["results"]["mean"]),
            ("sample std", summary["results"]["std"]),
        ]
        tables.append(results_table(columns, tasks))
    if evaluation.suite is not None and base_suite is not None:
        rows = [(f"{config.base} (base)", base_suite)]
        rows += [(f"seed {seed}", run["suite"]["trained"]) for seed, run in runs.items()]
        rows += [
            (f"mean of {n} seeds", summary["suite"]["mean"]),
            ("sample std", summary["suite"]["std"]),
        ]
        encoding = trainer_encoding(config.device, base_facts["prefix"])
        summary["suite"].update(name=evaluation.suite.name, encoding=encoding)
        title = suite_title(evaluation.suite.name, encoding)
        tables.append(f"{title}\n\n" + suite_table(rows, evaluation.suite))
    table = "\n\n".join(tables)
    write_seeds_summary(config.output, summary, table)
    log.info("saved %d seeds' models and their summary in %s", n, config.output)
    return table


def _on_suite(
    model: SentenceTransformer, evaluation: EvalData, prefix: str, batch_size: int
) -> dict[str, Any]:
    """The suite's figures for ``model`` (frozen vectors, probes), with the time they took."""
    from paramine.encoders.evaluation.suite_eval import evaluate_on_suite

    assert evaluation.suite is not None
    started = time.perf_counter()
    result = evaluate_on_suite(
        model, evaluation.suite, evaluation.suite_root, prefix, batch_size, evaluation.suite_data
    )
    return {**result, "seconds": round(time.perf_counter() - started, 1)}
