"""The recheck's rows judged apart: each half of the pivots by a model trained on the other half.

``--recheck-false-accept`` judges a run's rows again after the first epoch
with the model in training, which has seen every row once by then
(``small_loss.py``). ``--recheck-by other-half`` judges them before the run
instead, by models that never saw them: the rows' pivots split in two by hash
(a pivot's rows, its paraphrase rows too, stay in one half), a model trained
on each half (half the run's steps: the run's epochs over its half) judges the
other half's rows against the same null as the recheck, and the rows below it
stay out of the whole run. Two half runs cost one run more.

On Ho's round 1 (seed 43, 479 rows, 41 of them planted; ``benchmarks/quality/
recheck_judges.py``) at the share 0.1, the model in training sets aside 28
planted and 154 true rows, the models trained apart 34 planted and 73 true.

The rows set aside are written beside the checkpoints
(:data:`RECORD`) before the run starts, so a resumed run trains on the same rows.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.holdout import split_key
from paramine.encoders.training.seeds import SeedPlace
from paramine.schemas.text_keys import hash_fraction

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from paramine.encoders.training.config import TrainConfig

log = logging.getLogger(__name__)

#: The rows the models trained apart set aside, in the run's checkpoint folder.
RECORD = "rows-judged-apart.json"
#: The settings of the runs that judged (or were judged for): no recheck of their own.
NOT_RECHECKED: dict[str, Any] = {"recheck_false_accept": 1.0, "recheck_by": "model"}


def halves(pivots: Sequence[str]) -> list[bool]:
    """Each row's half: whether its pivot hashes below one half."""
    return [hash_fraction(split_key(pivot)) < 0.5 for pivot in pivots]


def judges_apart(config: TrainConfig, rows: int) -> bool:
    """Whether a run on ``rows`` rows judges them apart: ``--recheck-by other-half``, > 1 epoch.

    A run of one epoch is not judged again either way: no row is seen twice.
    """
    if config.recheck_by != "other-half" or config.recheck_false_accept >= 1.0:
        return False
    return run_steps(config, rows) > math.ceil(rows / config.batch_size)


def run_steps(config: TrainConfig, rows: int) -> int:
    """The steps a run on ``rows`` rows takes: ``--max-steps``, else its epochs and floor."""
    from paramine.encoders.training.seed_training import training_epochs

    if config.max_steps > 0:
        return config.max_steps
    epoch = math.ceil(rows / config.batch_size)
    return math.ceil(training_epochs(config, epoch) * epoch)


def set_aside_apart(
    config: TrainConfig,
    columns: dict[str, list[str]],
    pivots: Sequence[str],
    train_half: Callable[[TrainConfig, dict[str, list[str]], SeedPlace], Any],
) -> list[int]:
    """The rows the models trained apart set aside (row numbers), read back where recorded.

    ``train_half(config, columns, place)`` trains a model from a fresh copy of
    the base and returns it. A ``--resume``d run reads the record of the run
    it resumes (the same number of rows); any other run judges afresh.
    """
    from paramine.encoders.training.small_loss import below_null, row_vectors

    record = os.path.join(config.checkpoints, RECORD)
    rows = len(pivots)
    if config.resume and os.path.exists(record):
        with open(record, encoding="utf-8") as f:
            recorded = json.load(f)
        if recorded["rows"] == rows:
            found: list[int] = recorded["set_aside"]
            log.info("rows judged apart: %d set aside, read from %s", len(found), record)
            return found
    half = halves(pivots)
    steps = math.ceil(run_steps(config, rows) / 2)
    # A judge is not a model to keep: no selection on a suite's dev splits either.
    apart = dataclasses.replace(
        config, max_steps=steps, seeds=1, select_on="none", select_every=0, select_tasks=(),
        **NOT_RECHECKED,
    )  # fmt: skip
    first = [i for i in range(rows) if half[i]]
    second = [i for i in range(rows) if not half[i]]
    # Both halves checked before either trains: a judge is not trained for nothing.
    if min(len(first), len(second)) < max(config.batch_size, 2):
        log.warning(
            "rows judged apart: one half holds %d of %d rows, fewer than a batch of %d; "
            "no row set aside",
            min(len(first), len(second)),
            rows,
            config.batch_size,
        )
        return []
    set_aside: list[int] = []
    for n, (trained_on, judged) in enumerate(((first, second), (second, first))):
        name = os.path.join(config.checkpoints, f"judge-{n}")
        place = SeedPlace(config.seed, name, name + "-checkpoints")
        model = train_half(
            apart, {k: [v[i] for i in trained_on] for k, v in columns.items()}, place
        )
        anchors, positives = row_vectors(
            model, [columns["anchor"][i] for i in judged], [columns["positive"][i] for i in judged]
        )
        below = below_null(anchors, positives, config.recheck_false_accept)
        set_aside += [judged[int(i)] for i in below]
        del model
    set_aside.sort()
    os.makedirs(config.checkpoints, exist_ok=True)
    temporary = record + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump({"steps_each": steps, "rows": rows, "set_aside": set_aside}, f)
    os.replace(temporary, record)
    log.info(
        "rows judged apart (two models of %d steps, each on half the pivots): %d of %d below "
        "the null's %.2f share, left out of training",
        steps,
        len(set_aside),
        rows,
        config.recheck_false_accept,
    )
    return set_aside


def judge_apart(
    config: TrainConfig,
    precision: str,
    base_facts: dict[str, Any],
    columns: dict[str, list[str]],
    pivots: Sequence[str],
) -> tuple[dict[str, list[str]], TrainConfig, int | None]:
    """The columns the seeds train on, their config, and how many rows were set aside.

    With ``--recheck-by other-half`` in a run of more than one epoch, the rows
    the models trained apart set aside are left out, and the seeds train
    without the recheck after their first epoch; otherwise all is as given
    (and the count None). ``base_facts``: ``load_base``'s, the base's path and prefix.
    """
    if not judges_apart(config, len(columns["anchor"])):
        return columns, config, None
    from paramine.encoders.modules.lstm_pooling import load_encoder
    from paramine.encoders.training.seed_training import train_seed

    def train_half(half: TrainConfig, rows: dict[str, list[str]], place: SeedPlace) -> Any:
        base = load_encoder(base_facts["path"], device=config.device)
        return train_seed(half, precision, base, base_facts["prefix"], rows, place, None, {})[0]

    aside = set(set_aside_apart(config, columns, pivots, train_half))
    kept = [i for i in range(len(columns["anchor"])) if i not in aside]
    columns = {name: [values[i] for i in kept] for name, values in columns.items()}
    return columns, dataclasses.replace(config, **NOT_RECHECKED), len(aside)
