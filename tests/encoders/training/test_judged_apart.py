"""``--recheck-by other-half``: each half of the pivots' rows judged by the other half's model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import torch
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.judged_apart import (
    RECORD,
    halves,
    judges_apart,
    run_steps,
    set_aside_apart,
)
from paramine.encoders.training.seeds import SeedPlace


def _config(tmp_path: Path, **given: Any) -> TrainConfig:
    return TrainConfig(
        dataset="d",
        base="b",
        output=str(tmp_path / "model"),
        recipe="adapt",
        batch_size=8,
        recheck_by="other-half",
        **given,
    )


def test_only_a_run_of_more_than_one_epoch_is_judged_apart(tmp_path: Path) -> None:
    config = _config(tmp_path, min_steps=10)
    assert run_steps(config, 40) == 10 and judges_apart(config, 40)  # 5 steps an epoch
    assert not judges_apart(_config(tmp_path, min_steps=0), 40)  # one epoch: no row seen twice
    assert judges_apart(_config(tmp_path, max_steps=6), 40)
    by_model = TrainConfig(dataset="d", base="b", output="o", recipe="adapt", batch_size=8)
    assert by_model.recheck_by == "model" and not judges_apart(by_model, 40)


def test_the_halves_keep_each_pivots_rows_together() -> None:
    pivots = [f"Pivot sentence {i % 50}." for i in range(200)]
    half = halves(pivots)
    assert 15 <= sum(half[:50]) <= 35  # about half of the 50 pivots
    for i, pivot in enumerate(pivots):
        assert half[i] == half[i % 50], pivot


class _Lexicon:
    """A judge that knows which candidate translates which pivot: true rows score 1, others ~0.

    It stands in for a trained model so that the test reads which rows each
    half's judge saw; the real models' path is tested through ``paramine train``.
    """

    def __init__(self, truth: dict[str, str]) -> None:
        self.truth, self.training = truth, False
        generator = torch.Generator().manual_seed(0)
        self.vectors = {
            pivot: torch.nn.functional.normalize(torch.randn(64, generator=generator), dim=0)
            for pivot in truth.values()
        }

    def train(self, mode: bool) -> None:
        self.training = mode

    def encode(self, texts: list[str], **_: Any) -> torch.Tensor:
        return torch.stack([self.vectors[self.truth.get(t, t)] for t in texts])


def test_each_half_is_judged_by_the_model_of_the_other_and_the_verdict_is_kept(
    tmp_path: Path,
) -> None:
    pivots = [f"Pivot sentence {i}." for i in range(60)]
    truth = {f"zdanie {i}": pivots[i] for i in range(60)}  # candidate -> its pivot
    # Every sixth row is planted: a pivot beside another pivot's candidate.
    rows = [(p, f"zdanie {(i + 7) % 60 if i % 6 == 0 else i}") for i, p in enumerate(pivots)]
    columns = {"anchor": [a for a, _ in rows], "positive": [p for _, p in rows]}
    half = halves(pivots)
    trained: list[tuple[int, set[bool]]] = []

    def train_half(config: TrainConfig, rows: dict[str, list[str]], place: SeedPlace) -> Any:
        assert config.recheck_false_accept == 1.0 and place.seed == 42
        trained.append((config.max_steps, {half[pivots.index(a)] for a in rows["anchor"]}))
        return _Lexicon(truth)

    config = _config(tmp_path, min_steps=30)
    aside = set_aside_apart(config, columns, pivots, train_half)
    # Two models, each on one half only, half the run's 30 steps each.
    assert trained == [(15, {True}), (15, {False})]
    assert aside == [i for i in range(60) if i % 6 == 0]
    record = json.loads((Path(config.checkpoints) / RECORD).read_text())
    assert record == {"steps_each": 15, "rows": 60, "set_aside": aside}
    # A resumed run reads the verdict: no model is trained again; a fresh run, or one on
    # other rows, judges afresh.
    trained.clear()
    resumed = dataclasses.replace(config, resume=True)
    assert set_aside_apart(resumed, columns, pivots, train_half) == aside and trained == []
    assert set_aside_apart(config, columns, pivots, train_half) == aside and len(trained) == 2
    fewer = {name: values[:54] for name, values in columns.items()}
    again = set_aside_apart(resumed, fewer, pivots[:54], train_half)
    assert len(trained) == 4 and again and set(again) <= set(aside[:-1])


def test_a_half_smaller_than_a_batch_sets_nothing_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pivots = [f"Pivot sentence {i}." for i in range(10)]
    columns = {"anchor": pivots, "positive": [f"zdanie {i}" for i in range(10)]}

    def train_half(*_: Any) -> Any:
        raise AssertionError("no model trains where a half is smaller than a batch")

    assert set_aside_apart(_config(tmp_path, min_steps=30), columns, pivots, train_half) == []
    assert "fewer than a batch of 8" in caplog.text


def test_no_judge_trains_where_the_second_half_is_smaller_than_a_batch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    everyone = [f"Pivot sentence {i}." for i in range(200)]
    side = halves(everyone)
    first = [p for p, s in zip(everyone, side, strict=True) if s]
    second = [p for p, s in zip(everyone, side, strict=True) if not s]
    pivots = first[:20] + second[:3]  # the first half a judge's worth, the second not
    columns = {"anchor": pivots, "positive": [f"zdanie {i}" for i in range(len(pivots))]}

    def train_half(*_: Any) -> Any:
        raise AssertionError("no judge trains when the other half cannot be judged apart")

    assert set_aside_apart(_config(tmp_path, min_steps=30), columns, pivots, train_half) == []
    assert "one half holds 3 of 23 rows" in caplog.text


def test_paramine_train_judges_apart_before_its_run_and_records_it(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    from paramine.encoders.training.model_card import SUMMARY_FILE
    from paramine.pipelines.cli import main as cli_main

    from tests.encoders.datasets import make_rows, write_scored_dataset

    lines = [(f"Pivot sentence number {i}.", f"zdanie {i} jest dobry", 0.99) for i in range(40)]
    url = write_scored_dataset(tmp_path / "ds", make_rows(40), lines)
    model = tmp_path / "model"
    args = [url, "--base", str(tiny_model_dir), "--output", str(model), "--device", "cpu"]
    args += ["--recipe", "adapt", "--batch-size", "8", "--min-steps", "24", "--eval-share", "0"]
    assert cli_main(["train", *args, "--recheck-by", "other-half", "--quiet"]) == 0
    training = json.loads((model / SUMMARY_FILE).read_text())
    record = json.loads((tmp_path / "model-checkpoints" / RECORD).read_text())
    # 80 rows (40 pairs, 40 aligned lines), 10 steps an epoch: 24 steps, 12 each half.
    assert (record["rows"], record["steps_each"]) == (80, 12)
    run = training["training"]
    assert run["rows_set_aside_by_recheck"] == len(record["set_aside"])
    assert run["train_pairs"] == 80 - len(record["set_aside"])


def test_judging_apart_needs_a_share_to_judge_at(tmp_path: Path) -> None:
    from paramine.schemas.errors import UsageError

    with pytest.raises(UsageError, match="--recheck-false-accept < 1"):
        _config(tmp_path, recheck_false_accept=1.0)


def test_the_judges_train_without_the_runs_dev_selection(tmp_path: Path) -> None:
    pivots = [f"Pivot sentence {i}." for i in range(60)]
    columns = {"anchor": pivots, "positive": [f"zdanie {i}" for i in range(60)]}
    truth = {f"zdanie {i}": pivots[i] for i in range(60)}
    seen: list[tuple[str, int]] = []

    def train_half(config: TrainConfig, rows: dict[str, list[str]], place: SeedPlace) -> Any:
        seen.append((config.select_on, config.select_every))
        return _Lexicon(truth)

    config = _config(tmp_path, min_steps=30, select_on="dev", select_every=5, suite="pl")
    set_aside_apart(config, columns, pivots, train_half)
    assert seen == [("none", 0), ("none", 0)]
