"""What ``paramine train`` writes: the model folder, its card, and the run's summary.

The folder holds the model only (sentence-transformers' own files and card),
with paramine's section appended to the card (true steps and epochs, the
data, the drops by reason, the before/after tables) and the run summary
``paramine_training.json``. It is built beside the output and swapped in
whole, so an earlier model is never left half overwritten.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.overlap import EVAL_OVERLAP
from paramine.encoders.training.recipes import overrides
from paramine.schemas.run_parts import TrainedFrom

if TYPE_CHECKING:
    from paramine.encoders.training.config import TrainConfig
    from paramine.encoders.training.data import TrainData
    from sentence_transformers import SentenceTransformer

#: What ``paramine train`` writes into the model folder besides the model.
SUMMARY_FILE = "paramine_training.json"


def save_model(
    model: SentenceTransformer, output: str, summary: dict[str, Any], table: str
) -> None:
    """Write the model, its card and the summary to ``output``, replacing it whole.

    The folder is built beside ``output`` and swapped in when complete, so an
    earlier model is never left half overwritten.
    """
    output = output.rstrip("/")
    building = f"{output}.building"
    shutil.rmtree(building, ignore_errors=True)
    # sentence-transformers writes its own model card (README.md): base model,
    # hyperparameters, training logs, the evaluators' scores.
    model.save(building, create_model_card=True)
    with open(os.path.join(building, "README.md"), "a", encoding="utf-8") as f:
        f.write("\n" + paramine_card_section(summary, table))
    with open(os.path.join(building, SUMMARY_FILE), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, ensure_ascii=False, default=str)
    if os.path.isdir(output):
        shutil.rmtree(output)
    os.rename(building, output)


def training_record(folder: str) -> TrainedFrom | None:
    """What a paramine-trained model folder says of its training; None for any other folder.

    The dataset it was trained on (the first pass of a mine -> train -> mine
    loop), when that dataset was mined, the recipe and seed, the rows and
    steps: what a run mining with the model records in its manifest.
    """
    path = os.path.join(folder, SUMMARY_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        summary = json.load(f)
    settings = summary.get("settings", {})
    training = summary.get("training", {})
    return TrainedFrom(
        dataset=summary.get("dataset"),
        dataset_created_at=summary.get("manifest", {}).get("created_at"),
        base=summary.get("base", {}).get("model_id"),
        recipe=settings.get("recipe"),
        train_on=settings.get("train_on"),
        loss_directions=settings.get("loss_directions"),
        seed=settings.get("seed"),
        eval_share=settings.get("eval_share"),
        train_rows=training.get("train_pairs"),
        global_step=training.get("global_step"),
    )


def training_summary(
    config: TrainConfig,
    data: TrainData,
    base: dict[str, Any],
    run: dict[str, Any],
    results: dict[str, dict[str, float]],
) -> dict[str, Any]:
    """What ``paramine_training.json`` records of a run: data, settings, training, results.

    Args:
        config: The run's settings.
        data: The rows it read and how they were chosen.
        base: The base model: spec, path, model id, revision, prefix.
        run: The run's own facts: ``settings`` (precision, seed, where it
            resumed from, its checkpoint folder), ``training`` (steps, loss,
            times), and ``selection`` and ``hard_negatives`` when used.
        results: ``{"base": ..., "trained": ...}`` of the evaluators.
    """
    settings = {
        key: value
        for key, value in dataclasses.asdict(config).items()
        if key not in ("dataset", "output")
    }
    counts = dict(data.counts)
    if "hard_negatives" in run:
        counts["hard_negatives"] = run["hard_negatives"]
    summary = {
        "dataset": config.dataset,
        "base": base,
        "manifest": {
            "created_at": data.manifest.created_at,
            "code_version": data.manifest.code_version,
            "model": data.manifest.model.to_json(),
            "threshold": data.manifest.threshold,
            "rows": data.manifest.rows.to_json(),
        },
        "counts": counts,
        "settings": settings
        | {"recipe_overrides": overrides(config.recipe, settings)}
        | run["settings"],
        "training": run["training"],
        "results": results,
    }
    if "selection" in run:
        summary["selection"] = run["selection"]
    return summary


def paramine_card_section(summary: dict[str, Any], table: str) -> str:
    """What paramine adds to sentence-transformers' model card: true run figures, data, scores."""
    training = summary["training"]
    counts = summary["counts"]
    settings = summary["settings"]
    dropped = ", ".join(f"{k}: {v}" for k, v in counts["train_dropped"].items()) or "none"
    recipe = str(settings["recipe"])
    if settings.get("recipe_overrides"):
        changed = ", ".join(f"{k} {v}" for k, v in settings["recipe_overrides"].items())
        recipe += f" with {changed}"
    lines = [
        "## paramine training run",
        "",
        f"- Recipe: {recipe}; pooling {settings['pooling']}, lr {settings['lr']}, head lr "
        f"{settings['head_lr']}, loss {settings['loss']}, seed {settings['seed']}",
        f"- Steps: {training['global_step']}, epochs: {training['epoch']:.2f} "
        f"({training['train_pairs']} training pairs, batch {settings['batch_size']})",
        f"- Data: `{summary['dataset']}` (mined {summary['manifest']['created_at']} by "
        f"{summary['manifest']['code_version']}); {counts['rows_read']} pairs read, "
        f"{counts['eval_pivots_rows']} held out by pivot (share {settings['eval_share']}), "
        f"{counts['train_rows_before_filters']} on the training side, dropped: {dropped}",
        f"- Base: `{summary['base']['spec']}` ({summary['base']['model_id']}, revision "
        f"{summary['base']['revision']})",
        "- Loading: `SentenceTransformer(path)` where paramine is installed (the LSTM pooling "
        "module is `paramine.encoders.modules.lstm_pooling.LSTMPooling`)",
    ]
    if summary["base"]["prefix"]:
        lines.append(
            f"- The prefix {summary['base']['prefix']!r} is the default prompt: `encode` adds it"
        )
    overlap = counts["train_dropped"].get(EVAL_OVERLAP)
    if overlap is not None:
        lines.append(
            f"- Evaluation data kept out of training: {overlap} training pairs shared a sentence "
            f"with the {counts['eval_sentences']} distinct evaluation sentences (normalized) "
            "and were dropped"
        )
    selection = summary.get("selection")
    if selection:
        lines.append(
            f"- Kept the model of step {selection['kept_step']} of {training['global_step']}: "
            f"the best dev average ({selection['kept_dev_average']:.2f}) of the suite's tasks "
            f"{', '.join(selection['tasks'])}, scored at steps "
            f"{', '.join(str(e['step']) for e in selection['history'])}"
        )
    if table:
        lines += ["", "### Before and after training", "", table]
    return "\n".join(lines) + "\n"
