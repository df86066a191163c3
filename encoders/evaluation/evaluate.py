"""Score sentence encoders through sentence-transformers' evaluators.

Three tasks, each a kept evaluator of sentence-transformers:

- **paraphrase retrieval** on the held-out pivots of a mined dataset
  (``InformationRetrievalEvaluator``): each ``sentence_a`` is a query, every
  ``sentence_b`` of the split a document; the right answers are the
  ``sentence_b`` of the same pivot (other paraphrases of it are not wrong);
  top-1 accuracy and MRR@10;
- **bitext retrieval** on a user-given bitext (``TranslationEvaluator``): for
  each sentence, is its translation the nearest of all, in both directions
  (the LASER Tatoeba test sets are 1000 such pairs per language);
- **STS** on a user-given TSV (``EmbeddingSimilarityEvaluator``): Spearman
  correlation of cosine with the gold scores.

``paramine evaluate`` scores models side by side; ``paramine train`` runs the
same evaluators before and after training.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.eval_files import Bitext, StsData, read_eval_files
from paramine.encoders.models.resolve import prompt_applied

if TYPE_CHECKING:
    import pandas as pd
    from paramine.encoders.evaluation.config import EvaluateConfig
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

#: Fewer held-out pairs than this make retrieval figures too coarse to compare
#: models (10 pairs: every model scores 1.0); training warns below it.
MIN_RETRIEVAL_PAIRS = 300
#: The metric each task reports, under the names the results table uses.
RETRIEVAL_METRICS = {"cosine_accuracy@1": "top1", "cosine_mrr@10": "mrr@10"}
BITEXT_METRICS = {"src2trg_accuracy": "src2trg", "trg2src_accuracy": "trg2src"}
STS_METRICS = {"spearman_cosine": "spearman"}


@dataclass(frozen=True)
class Task:
    """One evaluator and the name its metrics are reported under."""

    name: str
    evaluator: Any
    metrics: dict[str, str]
    size: int


def retrieval_task(
    pairs: pd.DataFrame, batch_size: int = 64, name: str = "held-out pivots"
) -> Task:
    """Paraphrase retrieval over ``pairs`` (``sentence_a``, ``sentence_b``, ``pivot_sentence``).

    Every ``sentence_b`` of the same pivot (by split key) is a right answer.
    """
    from paramine.encoders.evaluation.holdout import split_key
    from sentence_transformers.sentence_transformer.evaluation import (
        InformationRetrievalEvaluator,
    )

    keys = pairs["pivot_sentence"].map(split_key).tolist()
    queries = {f"q{i}": text for i, text in enumerate(pairs["sentence_a"].tolist())}
    corpus = {f"d{i}": text for i, text in enumerate(pairs["sentence_b"].tolist())}
    by_key: dict[str, set[str]] = {}
    for i, key in enumerate(keys):
        by_key.setdefault(key, set()).add(f"d{i}")
    relevant = {f"q{i}": by_key[key] for i, key in enumerate(keys)}
    evaluator = InformationRetrievalEvaluator(
        queries,
        corpus,
        relevant,
        accuracy_at_k=[1],
        precision_recall_at_k=[1],
        mrr_at_k=[10],
        ndcg_at_k=[10],
        map_at_k=[10],
        batch_size=batch_size,
        name="held_out_pivots",
        write_csv=False,
    )
    return Task(name, evaluator, RETRIEVAL_METRICS, len(pairs))


def bitext_task(bitext: Bitext, batch_size: int = 64) -> Task:
    """Bitext retrieval accuracy in both directions."""
    from sentence_transformers.sentence_transformer.evaluation import TranslationEvaluator

    evaluator = TranslationEvaluator(
        bitext.source,
        bitext.target,
        batch_size=batch_size,
        name=f"bitext_{bitext.name}",
        write_csv=False,
    )
    return Task(f"bitext {bitext.name}", evaluator, BITEXT_METRICS, len(bitext.source))


def sts_task(sts: StsData, name: str = "sts", batch_size: int = 64) -> Task:
    """Spearman correlation of cosine similarity with gold scores."""
    from sentence_transformers.sentence_transformer.evaluation import (
        EmbeddingSimilarityEvaluator,
    )

    evaluator = EmbeddingSimilarityEvaluator(
        sts.sentence1,
        sts.sentence2,
        sts.scores,
        batch_size=batch_size,
        similarity_fn_names=["cosine"],
        name=f"sts_{name}",
        write_csv=False,
    )
    return Task(f"STS {name}", evaluator, STS_METRICS, len(sts.scores))


def evaluate_model(
    model: SentenceTransformer,
    tasks: Sequence[Task],
    prefix: str = "",
    epoch: float = -1,
    steps: int = -1,
) -> dict[str, float]:
    """Run each task's evaluator; return ``{"<task> <metric>": value}``.

    ``epoch`` and ``steps`` go with the scores into the model card's data.
    """
    results: dict[str, float] = {}
    with prompt_applied(model, prefix):
        for task in tasks:
            log.info("evaluating on %s (%d pairs)", task.name, task.size)
            scores = task.evaluator(model, epoch=epoch, steps=steps)
            prefix_name = f"{task.evaluator.name}_" if task.evaluator.name else ""
            for key, label in task.metrics.items():
                results[f"{task.name} {label}"] = float(scores[prefix_name + key])
    return results


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def results_table(
    columns: Sequence[tuple[str, dict[str, float]]], tasks: Sequence[Task] = ()
) -> str:
    """Return a Markdown table: one row per metric, one column per model.

    With two models a ``change`` column gives the second minus the first
    (after minus before).
    """
    metrics = list(dict.fromkeys(key for _, result in columns for key in result))
    sizes = {task.name: task.size for task in tasks}
    show_change = len(columns) == 2
    header = ["metric", "pairs", *(name for name, _ in columns)]
    header += ["change"] if show_change else []
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for key in metrics:
        task_name = key.rsplit(" ", 1)[0]
        values = [result.get(key) for _, result in columns]
        cells = [key, _cell(sizes.get(task_name)), *(_cell(v) for v in values)]
        if show_change:
            before, after = values
            cells.append(
                f"{after - before:+.4f}" if before is not None and after is not None else "-"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def build_tasks(
    pairs: pd.DataFrame | None,
    bitexts: Sequence[Bitext],
    sts: Sequence[tuple[str, StsData]],
    batch_size: int,
) -> list[Task]:
    """The evaluators for a run, in the order the table shows them."""
    tasks = [retrieval_task(pairs, batch_size)] if pairs is not None and len(pairs) else []
    tasks += [bitext_task(bitext, batch_size) for bitext in bitexts]
    tasks += [sts_task(data, name, batch_size) for name, data in sts]
    return tasks


def main(argv: list[str] | None = None) -> int:
    """Run ``paramine evaluate``; return the exit status."""
    from paramine.encoders.evaluation.config import EvaluateConfig
    from paramine.schemas.options import parse_config

    description = (
        "Score encoders on paraphrase retrieval (held-out split of a mined dataset), bitext "
        "retrieval and STS, or on an evaluation suite; prints a Markdown table."
    )
    if not logging.getLogger().handlers:
        # Progress goes to stderr through logging; the table is the output.
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    # Errors reach the user through the CLI's one boundary (pipelines/cli.py).
    config = parse_config(
        EvaluateConfig, "paramine evaluate", description, sys.argv[1:] if argv is None else argv
    )
    return _evaluate(config)


def _evaluate(config: EvaluateConfig) -> int:
    from paramine.encoders.evaluation.holdout import load_split
    from paramine.encoders.models.folder_check import check_local_folder
    from paramine.encoders.models.resolve import resolve_model
    from paramine.encoders.modules.lstm_pooling import load_encoder

    if config.suite:
        from paramine.encoders.evaluation.suite_eval import suite_command

        return suite_command(config)
    pairs = None
    if config.dataset:
        pairs = load_split(config.dataset, config.eval_share, config.split, config.max_pairs)
        log.info("%s: %d pairs in split %r", config.dataset, len(pairs), config.split)
    bitexts, sts = read_eval_files(config, config.eval_share)
    tasks = build_tasks(pairs, bitexts, sts, config.batch_size)

    columns: list[tuple[str, dict[str, float]]] = []
    for spec in config.scored:
        resolved = resolve_model(spec, flag="MODEL")
        check_local_folder(resolved, spec, "MODEL")
        model = load_encoder(resolved.path, device=config.device)
        metrics = evaluate_model(model, tasks, resolved.prefix)
        name = f"{spec} (base)" if config.base and spec == config.base and not columns else spec
        columns.append((name, metrics))

    print(results_table(columns, tasks))
    if config.json_path:
        from paramine.schemas.storage import atomic_write

        atomic_write(
            config.json_path,
            json.dumps([{"model": name, **m} for name, m in columns], indent=2) + "\n",
        )
    return 0
