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
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from paramine.encoders.models.resolve import prompt_applied
from paramine.schemas.errors import InputError, UsageError

if TYPE_CHECKING:
    import pandas as pd
    from paramine.encoders.evaluation.config import EvalOptions, EvaluateConfig
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
class StsData:
    """Sentence pairs with gold similarity scores."""

    sentence1: list[str]
    sentence2: list[str]
    scores: list[float]


@dataclass(frozen=True)
class Bitext:
    """Line-aligned translations: ``target[i]`` translates ``source[i]``."""

    name: str
    source: list[str]
    target: list[str]


@dataclass(frozen=True)
class Task:
    """One evaluator and the name its metrics are reported under."""

    name: str
    evaluator: Any
    metrics: dict[str, str]
    size: int


def read_sts_tsv(path: str) -> StsData:
    """Read ``sentence1<TAB>sentence2<TAB>score`` lines (fsspec URL or path).

    A first line whose score is not a number is taken as a header. Blank
    lines are skipped; any other malformed line is an error naming it.
    """
    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    for number, line in enumerate(_read_lines(path, "--eval-sts"), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise InputError(
                f"{path}:{number}: expected 3 tab-separated fields "
                f"(sentence1, sentence2, score), found {len(fields)}"
            )
        try:
            score = float(fields[2])
        except ValueError:
            if number == 1:
                continue  # a header
            raise InputError(f"{path}:{number}: score {fields[2]!r} is not a number") from None
        s1.append(fields[0])
        s2.append(fields[1])
        scores.append(score)
    if len(scores) < 2:
        raise InputError(f"{path}: {len(scores)} scored sentence pairs; Spearman needs 2 or more")
    return StsData(s1, s2, scores)


def _read_lines(path: str, flag: str) -> list[str]:
    """The lines of a UTF-8 text file, line ends stripped; ``flag`` names it in errors."""
    import fsspec

    try:
        with fsspec.open(path, "r", encoding="utf-8") as f:
            return [line.rstrip("\r\n") for line in f]
    except FileNotFoundError:
        raise InputError(f"{flag}: {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{flag}: {path} is a folder; give a file") from None
    except UnicodeDecodeError as error:
        raise InputError(
            f"{flag}: {path} is not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def read_bitext(paths: Sequence[str]) -> Bitext:
    """Read a bitext: two line-aligned files (Moses style), or one two-column TSV.

    Raises:
        InputError: the files differ in length, a TSV line has not 2 fields,
            or fewer than 2 pairs remain (retrieval needs a distractor).
    """
    if len(paths) == 2:
        source, target = (_read_lines(path, "--eval-bitext") for path in paths)
        if len(source) != len(target):
            raise InputError(
                f"--eval-bitext: {paths[0]} has {len(source)} lines but {paths[1]} has "
                f"{len(target)}; give two line-aligned files"
            )
        name = "-".join(PurePosixPath(path).suffix.lstrip(".") or "x" for path in paths)
        # tatoeba.pol-eng.pol + .eng -> "pol-eng"
        name = name if name != "x-x" else PurePosixPath(paths[0]).stem
    elif len(paths) == 1:
        source, target = [], []
        for number, line in enumerate(_read_lines(paths[0], "--eval-bitext"), start=1):
            fields = line.split("\t")
            if len(fields) != 2:
                raise InputError(
                    f"{paths[0]}:{number}: expected 2 tab-separated fields (a sentence and "
                    f"its translation), found {len(fields)}"
                )
            source.append(fields[0])
            target.append(fields[1])
        name = PurePosixPath(paths[0]).stem
    else:
        raise UsageError(
            f"--eval-bitext takes one TSV or two line-aligned files, got {len(paths)} paths"
        )
    # Blank lines on either side are not pairs.
    kept = [(s, t) for s, t in zip(source, target, strict=True) if s.strip() and t.strip()]
    if len(kept) < 2:
        raise InputError(f"--eval-bitext {' '.join(paths)}: {len(kept)} sentence pairs, need 2+")
    return Bitext(name, [s for s, _ in kept], [t for _, t in kept])


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


def held_out_bitexts(paths: Sequence[str], eval_share: float) -> list[Bitext]:
    """The held-out lines of a bitext as two retrieval sets: translations, and paraphrases.

    A line is held out when its pivot (first file) falls in the held-out
    split, by the hash ``paramine train`` splits a dataset's pivots by
    (:mod:`paramine.encoders.evaluation.holdout`), so a model trained on a
    dataset mined from this bitext never saw these pivots. Per distinct held-
    out pivot: the pivot against its first translation (``held-out <src>-<tgt>``),
    and, where it has two distinct translations, one against the other
    (``held-out paraphrases <tgt>``). A text already taken by another pivot is
    not used again: retrieval needs every text once.
    """
    from paramine.encoders.evaluation.holdout import split_key
    from paramine.schemas.text_keys import hash_fraction

    bitext = read_bitext(paths)
    groups: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for pivot, candidate in zip(bitext.source, bitext.target, strict=True):
        key = split_key(pivot)
        if hash_fraction(key) >= eval_share:
            continue
        first.setdefault(key, pivot)
        found = groups.setdefault(key, [])
        if candidate not in found:
            found.append(candidate)
    used: set[str] = set()
    translations: list[tuple[str, str]] = []
    paraphrases: list[tuple[str, str]] = []
    for key, candidates in groups.items():
        pivot = first[key]
        fresh = [c for c in candidates if c not in used]
        if pivot in used or not fresh:
            continue
        used.update((pivot, fresh[0]))
        translations.append((pivot, fresh[0]))
        if len(fresh) >= 2:
            used.add(fresh[1])
            paraphrases.append((fresh[0], fresh[1]))
    found_sets = []
    target = bitext.name.rsplit("-", 1)[-1]
    for name, pairs in (
        (f"held-out {bitext.name}", translations),
        (f"held-out paraphrases {target}", paraphrases),
    ):
        if len(pairs) < 2:
            log.warning("%s: %d pairs in the held-out split; not scored", name, len(pairs))
            continue
        found_sets.append(Bitext(name, [a for a, _ in pairs], [b for _, b in pairs]))
    return found_sets


def read_eval_files(
    config: EvalOptions, eval_share: float
) -> tuple[list[Bitext], list[tuple[str, StsData]]]:
    """Read the files that ``--eval-bitext``, ``--eval-held-out`` and ``--eval-sts`` name.

    ``eval_share``: the held-out share of pivots, which ``--eval-held-out`` follows.
    """
    bitexts = [read_bitext(paths) for paths in config.eval_bitext]
    for paths in config.eval_held_out:
        bitexts += held_out_bitexts(paths, eval_share)
    sts = [(PurePosixPath(path).stem, read_sts_tsv(path)) for path in config.eval_sts]
    return bitexts, sts


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
    from paramine.encoders.lstm_pooling import load_encoder
    from paramine.encoders.models.folder_check import check_local_folder
    from paramine.encoders.models.resolve import resolve_model

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
