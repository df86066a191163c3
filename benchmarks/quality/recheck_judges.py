"""Which training rows a recheck sets aside: judged by the model training on them, or by another.

A round of ``paramine adapt`` trains on its pass's aligned lines, and after
the first epoch judges every row again (``--recheck-false-accept``) with the
model as trained so far, which has seen each row once (``small_loss.py``).
The other judge here is cross-fitted: the rows' pivots split in two by hash
(a pivot's rows stay in one half), a model trained on each half judges the
other half's rows. Each half trains half the round's steps (the round's
epochs over its half), so the two cost one round's training. Given the
clean sets the noisy input was made from, this counts the planted and the
true rows each judge sets aside at each share of the null, and lists the
planted rows that the cross-fitted judge keeps at the default share, with
the score it gave them beside the true rows' median::

    python -m benchmarks.quality.recheck_judges W/adapt/rounds/round-0/dataset \\
        --clean testsets/eng-hoc --candidate hoc --seed 43 --workdir J

The dataset is a pass mined with ``--write-scored`` (round 0 of a
``bench_quality --adapt`` run); its training rows are the round's own
(``paramine train DATASET --recipe adapt --eval-share 0.1``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from paramine.encoders.training.base_model import load_base
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.data import prepare_data, read_evaluation
from paramine.encoders.training.hard_negatives import TrainingRows, training_rows
from paramine.encoders.training.judged_apart import halves, run_steps
from paramine.encoders.training.modeling import choose_precision
from paramine.encoders.training.recipes import RECIPES
from paramine.encoders.training.seed_training import train_seed
from paramine.encoders.training.seeds import SeedPlace
from paramine.encoders.training.small_loss import below_null, row_vectors
from paramine.schemas.options import parse_config
from transformers import TrainerCallback

from benchmarks.quality.aligned_rows import HELD_OUT, pass_arguments, true_pairs

#: The adapt recipe's recheck share: a row must reach what this share of the null reaches.
DEFAULT_SHARE: float = RECIPES["adapt"]["recheck_false_accept"]


def planted_rows(rows: TrainingRows, clean: set[tuple[str, str]]) -> np.ndarray:
    """Which rows are planted: an aligned line not in the clean sets, or a pair holding one.

    An aligned row is (pivot, candidate); a paraphrase row is two candidates
    of its pivot, planted unless both are the pivot's clean translations.
    """
    translations: dict[str, set[str]] = {}
    for pivot, candidate in clean:
        translations.setdefault(pivot, set()).add(candidate)
    planted = []
    for anchor, positive, pivot in zip(rows.anchors, rows.positives, rows.pivots, strict=True):
        if anchor == pivot:
            planted.append((anchor, positive) not in clean)
        else:
            known = translations.get(pivot, set())
            planted.append(anchor not in known or positive not in known)
    return np.array(planted, dtype=bool)


class StopAfter(TrainerCallback):
    """End a training after ``steps`` steps, its schedule still the whole run's."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step >= self.steps:
            control.should_training_stop = True


@dataclasses.dataclass
class Judged:
    """One judge's verdicts on rows: which it sets aside at each share, and its scores."""

    name: str
    steps: int
    rows: np.ndarray  # the rows judged (numbers into the round's rows)
    aside: dict[float, np.ndarray]  # share -> a mask over ``rows``
    scores: np.ndarray  # cosine of each judged row


def judge(
    model: Any, rows: TrainingRows, numbers: np.ndarray, shares: Sequence[float]
) -> tuple[dict[float, np.ndarray], np.ndarray]:
    """What ``model`` sets aside of the rows ``numbers`` at each share of their null."""
    anchors, positives = row_vectors(
        model, [rows.anchors[i] for i in numbers], [rows.positives[i] for i in numbers]
    )
    aside = {}
    for share in shares:
        mask = np.zeros(len(numbers), dtype=bool)
        mask[below_null(anchors, positives, share)] = True
        aside[share] = mask
    return aside, (anchors * positives).sum(dim=1).float().cpu().numpy()


class Judges:
    """Trains the judges of one round's rows from its base, each from a fresh copy."""

    def __init__(self, config: TrainConfig, workdir: Path) -> None:
        from paramine.encoders.modules.lstm_pooling import load_encoder

        self.config, self.workdir = config, workdir
        self.precision = choose_precision(config.precision, config.device)
        data = prepare_data(config, read_evaluation(config))
        self.rows = training_rows(data.train, config.train_on, data.aligned)
        base, facts = load_base(config)
        del base
        self.prefix = facts["prefix"]
        self._load = lambda: load_encoder(facts["path"], device=config.device)

    def train(self, numbers: np.ndarray, steps: int, stop: int, name: str) -> Any:
        """A model trained on the rows ``numbers`` with a run of ``steps``, ended after ``stop``."""
        config = dataclasses.replace(self.config, max_steps=steps, recheck_false_accept=1.0)
        columns = {
            "anchor": [self.rows.anchors[i] for i in numbers],
            "positive": [self.rows.positives[i] for i in numbers],
        }
        place = SeedPlace(
            config.seed, str(self.workdir / name), str(self.workdir / f"{name}-checkpoints")
        )
        model, _ = train_seed(
            config, self.precision, self._load(), self.prefix, columns, place, None, {},
            [StopAfter(stop)],
        )  # fmt: skip
        return model

    def self_judge(self, shares: Sequence[float]) -> Judged:
        """The recheck as a round makes it: the round's run, stopped after its first epoch."""
        everyone = np.arange(len(self.rows.anchors))
        epoch = -(-len(everyone) // self.config.batch_size)
        model = self.train(everyone, run_steps(self.config, len(everyone)), epoch, "self")
        aside, scores = judge(model, self.rows, everyone, shares)
        return Judged(
            "the model in training, after its first epoch", epoch, everyone, aside, scores
        )

    def cross_judge(self, shares: Sequence[float]) -> Judged:
        """Each half's rows judged by a model trained on the other half, half the round's steps."""
        half = np.array(halves(self.rows.pivots), dtype=bool)  # as --recheck-by other-half
        steps = -(-run_steps(self.config, len(half)) // 2)
        parts: list[tuple[np.ndarray, dict[float, np.ndarray], np.ndarray]] = []
        for trained_on in (half, ~half):
            model = self.train(np.flatnonzero(trained_on), steps, steps, f"half-{len(parts)}")
            numbers = np.flatnonzero(~trained_on)
            parts.append((numbers, *judge(model, self.rows, numbers, shares)))
            del model
        numbers = np.concatenate([p[0] for p in parts])
        aside = {s: np.concatenate([p[1][s] for p in parts]) for s in shares}
        scores = np.concatenate([p[2] for p in parts])
        return Judged("a model trained on the other half", steps, numbers, aside, scores)


def table(judged: Sequence[Judged], planted: np.ndarray) -> str:
    """Planted and true rows set aside, by judge and share."""
    out = [
        f"{len(planted):,} rows, {int(planted.sum()):,} of them planted",
        "",
        "| judge | steps each | share of the null | planted set aside | true set aside |",
        "|---|---:|---:|---:|---:|",
    ]
    for j in judged:
        kind = planted[j.rows]
        for share, mask in j.aside.items():
            out.append(
                f"| {j.name} | {j.steps} | {share:g} | {int((mask & kind).sum())} of "
                f"{int(kind.sum())} | {int((mask & ~kind).sum())} of {int((~kind).sum())} |"
            )
    return "\n".join(out)


def kept_planted(j: Judged, rows: TrainingRows, planted: np.ndarray, share: float) -> str:
    """The planted rows ``j`` keeps at ``share``, highest score first, beside the true median."""
    kind = planted[j.rows]
    median = float(np.median(j.scores[~kind])) if (~kind).any() else float("nan")
    kept = np.flatnonzero(kind & ~j.aside[share])
    out = [f"planted rows {j.name} keeps at {share:g} (true rows' median score {median:.3f}):"]
    for i in kept[np.argsort(-j.scores[kept], kind="stable")].tolist():
        row = int(j.rows[i])
        out.append(f"  {j.scores[i]:.3f}  {rows.anchors[row]!r} | {rows.positives[row]!r}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = pass_arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="e5-small", help="the round's base model (e5-small)")
    parser.add_argument("--seed", type=int, default=42, help="the training seed (42)")
    parser.add_argument("--workdir", type=Path, required=True, help="the judges' models")
    parser.add_argument(
        "--shares", default=f"0.05,{DEFAULT_SHARE:g},0.2", help="null shares to set aside at"
    )
    parser.add_argument("--train-flags", default="", help="more paramine train flags")
    args = parser.parse_args(argv)
    shares = [float(v) for v in args.shares.split(",")]
    train_args = [
        args.dataset, "--base", args.base, "--recipe", "adapt", "--eval-share", str(HELD_OUT),
        "--seed", str(args.seed), "--output", str(args.workdir / "unused"), "--quiet",
        *args.train_flags.split(),
    ]  # fmt: skip
    config = parse_config(TrainConfig, "paramine train", "", train_args)
    judges = Judges(config, args.workdir)
    planted = planted_rows(judges.rows, true_pairs(args.clean, args.candidate))
    judged = [judges.self_judge(shares), judges.cross_judge(shares)]
    print(table(judged, planted))
    share = DEFAULT_SHARE if DEFAULT_SHARE in shares else shares[0]
    print("\n" + kept_planted(judged[1], judges.rows, planted, share))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
