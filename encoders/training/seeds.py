"""Several seeds (``--seeds N``): where each seed's model goes, and the mean and spread.

One seed's figures on a few thousand pairs move by tenths of a point from
seed to seed, the size of the effects a recipe is judged by; so ``--seeds N``
trains N times, with ``--seed``, ``--seed + 1``, ..., on the same data split
(the held-out pivots depend on the pivot hash, not the seed), and reports
per task the mean and the sample standard deviation over the seeds.

Layout with N > 1: every seed's model is kept, ``OUTPUT/seed-S`` (a model
folder, as a one-seed ``OUTPUT``: card and ``paramine_training.json``
included), its checkpoints in ``CHECKPOINTS/seed-S``; ``OUTPUT`` itself
holds ``paramine_training.json`` (every seed's figures, the base's, the mean
and the spread) and ``README.md`` (the tables). No seed is singled out as
"the" model: choosing the best seed by its test figures would be selection
on test. With N = 1 the layout is the usual one: the model in ``OUTPUT``.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paramine.encoders.training.config import TrainConfig


@dataclass(frozen=True)
class SeedPlace:
    """Where one seed's run writes."""

    seed: int
    output: str
    checkpoints: str


def seed_places(config: TrainConfig) -> list[SeedPlace]:
    """Each seed's model folder and checkpoint folder."""
    if config.seeds == 1:
        return [SeedPlace(config.seed, config.output, config.checkpoints)]
    return [
        SeedPlace(
            seed,
            os.path.join(config.output, f"seed-{seed}"),
            os.path.join(config.checkpoints, f"seed-{seed}"),
        )
        for seed in range(config.seed, config.seed + config.seeds)
    ]


def spread(values: Sequence[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Per key, the mean and the sample standard deviation (0 for a single value)."""
    keys = list(dict.fromkeys(key for value in values for key in value))
    mean, std = {}, {}
    for key in keys:
        column = [value[key] for value in values if key in value]
        mean[key] = statistics.fmean(column)
        std[key] = statistics.stdev(column) if len(column) > 1 else 0.0
    return mean, std


def suite_spread(results: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The suite's mean and spread rows: per task, and of the seeds' averages (2 decimals)."""
    mean, std = spread([{**r["tasks"], "average": r["average"]} for r in results])

    def row(values: dict[str, float]) -> dict[str, Any]:
        tasks = {key: round(v, 2) for key, v in values.items() if key != "average"}
        return {"tasks": tasks, "average": round(values["average"], 2)}

    return row(mean), row(std)


def seeds_summary(
    runs: dict[int, dict[str, Any]],
    base_results: dict[str, float],
    base_suite: dict[str, Any] | None,
) -> dict[str, Any]:
    """The figures of ``OUTPUT/paramine_training.json`` for several seeds.

    Args:
        runs: Each seed's own summary (what ``OUTPUT/seed-S`` records).
        base_results: The base's retrieval, bitext and STS figures.
        base_suite: The base's suite figures, if a suite was run.
    """
    trained = [run["results"].get("trained", {}) for run in runs.values()]
    summary: dict[str, Any] = {"seeds": list(runs)}
    if base_results:
        mean, std = spread(trained)
        summary["results"] = {"base": base_results, "mean": mean, "std": std}
    if base_suite is not None:
        suites = [run["suite"]["trained"] for run in runs.values()]
        mean_row, std_row = suite_spread(suites)
        summary["suite"] = {"base": base_suite, "mean": mean_row, "std": std_row}
    summary["per_seed"] = {
        str(seed): {
            "results": run["results"].get("trained"),
            "suite": run.get("suite", {}).get("trained"),
            "selection": run.get("selection"),
            "training": run["training"],
        }
        for seed, run in runs.items()
    }
    return summary


def write_seeds_summary(output: str, summary: dict[str, Any], table: str) -> None:
    """Write ``paramine_training.json`` and ``README.md`` (the tables) into ``output``."""
    from paramine.encoders.training.model_card import SUMMARY_FILE
    from paramine.schemas.storage import atomic_write

    text = json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n"
    atomic_write(os.path.join(output, SUMMARY_FILE), text)
    seeds = ", ".join(str(seed) for seed in summary["seeds"])
    readme = (
        f"# paramine training, seeds {seeds}\n\n"
        "Each seed's model is in `seed-S/`. Mean and sample standard deviation over the seeds; "
        "figures in `paramine_training.json`.\n\n" + table + "\n"
    )
    atomic_write(os.path.join(output, "README.md"), readme)
