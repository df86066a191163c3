"""What ``paramine train`` writes: the model folder, its card, and the run's summary.

The folder holds the model only (sentence-transformers' own files and card),
with paramine's section appended to the card (true steps and epochs, the
data, the drops by reason, the before/after tables) and the run summary
``paramine_training.json``. It is built beside the output and swapped in
whole, so an earlier model is never left half overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.overlap import EVAL_OVERLAP

if TYPE_CHECKING:
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


def paramine_card_section(summary: dict[str, Any], table: str) -> str:
    """What paramine adds to sentence-transformers' model card: true run figures, data, scores."""
    training = summary["training"]
    counts = summary["counts"]
    settings = summary["settings"]
    dropped = ", ".join(f"{k}: {v}" for k, v in counts["train_dropped"].items()) or "none"
    lines = [
        "## paramine training run",
        "",
        f"- Steps: {training['global_step']}, epochs: {training['epoch']:.2f} "
        f"({training['train_pairs']} training pairs, batch {settings['batch_size']})",
        f"- Data: `{summary['dataset']}` (mined {summary['manifest']['created_at']} by "
        f"{summary['manifest']['code_version']}); {counts['rows_read']} pairs read, "
        f"{counts['eval_pivots_rows']} held out by pivot (share {settings['eval_share']}), "
        f"{counts['train_rows_before_filters']} on the training side, dropped: {dropped}",
        f"- Base: `{summary['base']['spec']}` ({summary['base']['model_id']}, revision "
        f"{summary['base']['revision']})",
        "- Loading: `SentenceTransformer(path)` where paramine is installed (the LSTM pooling "
        "module is `paramine.encoders.lstm_pooling.LSTMPooling`)",
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
    if table:
        lines += ["", "### Before and after training", "", table]
    return "\n".join(lines) + "\n"
