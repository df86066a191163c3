"""The trainer's arguments as ``paramine train``'s settings make them."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.seed_training import _training_arguments
from paramine.encoders.training.seeds import SeedPlace
from paramine.schemas.errors import UsageError


def test_quiet_turns_the_progress_bar_off_and_keeps_the_loss_logged(tmp_path: Path) -> None:
    place = SeedPlace(7, str(tmp_path / "model"), str(tmp_path / "checkpoints"))

    def arguments(**given: object) -> object:
        config = TrainConfig(dataset="d", base="b", output="o", recipe="adapt", **given)
        return _training_arguments(config, "fp32", "", 100, place, {})

    loud, quiet = arguments(), arguments(quiet=True)
    assert (loud.disable_tqdm, quiet.disable_tqdm) == (False, True)
    assert quiet.logging_steps == loud.logging_steps == 10
    assert (quiet.learning_rate, quiet.per_device_train_batch_size, quiet.seed) == (5e-5, 32, 7)


def test_a_small_input_trains_at_least_the_recipes_floor_of_steps(tmp_path: Path) -> None:
    place = SeedPlace(7, str(tmp_path / "model"), str(tmp_path / "checkpoints"))

    def epochs(rows: int, recipe: str = "adapt", **given: object) -> float:
        config = TrainConfig(dataset="d", base="b", output="o", recipe=recipe, **given)
        return _training_arguments(config, "fp32", "", rows, place, {}).num_train_epochs

    # Klingon's round: 2,865 rows, 90 steps an epoch at batch 32: three epochs.
    assert epochs(2865) == 3.0
    assert epochs(2865, min_steps=0) == 1.0
    # Kabyle's: 677 steps an epoch, above the floor: one epoch.
    assert epochs(21_664) == 1.0
    # The paper's recipe has no floor; --max-steps overrides both.
    assert epochs(320, recipe="paper") == 3.0
    assert epochs(2865, max_steps=45) == 0.5


def test_the_floor_of_steps_is_checked() -> None:
    with pytest.raises(UsageError, match="--min-steps -1 must be 0 or more"):
        TrainConfig(dataset="d", base="b", output="o", min_steps=-1)


def test_a_run_of_two_epochs_judges_its_rows_again_and_trains_without_them(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    from paramine.encoders.training.seed_training import train_seed
    from sentence_transformers import SentenceTransformer

    words = ["river", "stone", "cloud", "bread", "window", "garden", "letter", "candle"]
    anchors = [f"the {a} and the {b}" for a in words for b in words[:3]]
    positives = list(anchors)
    positives[4] = positives[19] = "zebra quantum saxophone " * 3
    config = TrainConfig(
        dataset="d",
        base=str(tiny_model_dir),
        output=str(tmp_path / "model"),
        recipe="adapt",
        batch_size=8,
        epochs=2,
        min_steps=0,
        recheck_false_accept=0.05,
        quiet=True,
    )
    place = SeedPlace(7, str(tmp_path / "model"), str(tmp_path / "checkpoints"))
    base = SentenceTransformer(str(tiny_model_dir), device="cpu")
    columns = {"anchor": anchors, "positive": positives}
    _, run = train_seed(config, "fp32", base, "", columns, place, None, {})
    assert run["training"]["global_step"] == 6  # 24 rows, batches of 8, two epochs
    assert 2 <= run["training"]["rows_set_aside_by_recheck"] <= 4
    assert columns == {"anchor": anchors, "positive": positives}  # the caller's columns as given
