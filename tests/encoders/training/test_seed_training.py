"""The trainer's arguments as ``paramine train``'s settings make them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.modeling import native_bf16_cpu
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


def adapt_config(tmp_path: Path, tiny_model_dir: Path, **given: Any) -> TrainConfig:
    """The adapt recipe on the tiny model, no floor of steps: ``given`` overrides."""
    return TrainConfig(
        dataset="d",
        base=str(tiny_model_dir),
        output=str(tmp_path / "model"),
        recipe="adapt",
        min_steps=0,
        quiet=True,
        **given,
    )


def test_a_run_of_two_epochs_judges_its_rows_again_and_trains_without_them(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    from paramine.encoders.training.seed_training import train_seed
    from sentence_transformers import SentenceTransformer

    words = ["river", "stone", "cloud", "bread", "window", "garden", "letter", "candle"]
    anchors = [f"the {a} and the {b}" for a in words for b in words[:3]]
    positives = list(anchors)
    positives[4] = positives[19] = "zebra quantum saxophone " * 3
    config = adapt_config(
        tmp_path, tiny_model_dir, batch_size=8, epochs=2, recheck_false_accept=0.05
    )
    place = SeedPlace(7, str(tmp_path / "model"), str(tmp_path / "checkpoints"))
    base = SentenceTransformer(str(tiny_model_dir), device="cpu")
    columns = {"anchor": anchors, "positive": positives}
    _, run = train_seed(config, "fp32", base, "", columns, place, None, {})
    assert run["training"]["global_step"] == 6  # 24 rows, batches of 8, two epochs
    assert 2 <= run["training"]["rows_set_aside_by_recheck"] <= 4
    assert columns == {"anchor": anchors, "positive": positives}  # the caller's columns as given


@pytest.mark.skipif(
    torch.cuda.is_available() or not native_bf16_cpu(), reason="needs a CPU with native bf16"
)
def test_bf16_on_a_cpu_that_has_it_trains_under_autocast_and_keeps_fp32_weights(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    from paramine.encoders.training.seed_training import train_seed
    from sentence_transformers import SentenceTransformer

    anchors = [f"the {a} and the {b}" for a in ("river", "stone", "cloud", "bread") for b in "xyz"]
    config = adapt_config(tmp_path, tiny_model_dir, batch_size=4)
    columns = {"anchor": anchors, "positive": [a.upper() for a in anchors]}
    trained = {}
    for precision in ("fp32", "bf16"):
        base = SentenceTransformer(str(tiny_model_dir), device="cpu")  # trained in place
        before = {name: p.detach().clone() for name, p in base.named_parameters()}
        place = SeedPlace(7, str(tmp_path / precision), str(tmp_path / f"{precision}-checkpoints"))
        model, run = train_seed(config, precision, base, "", columns, place, None, {})
        assert run["settings"]["precision"] == precision
        assert run["training"]["global_step"] == 3
        trained[precision] = {name: p.detach().clone() for name, p in model.named_parameters()}
    layer = next(name for name in before if "layer.0.attention" in name and "weight" in name)
    bf16 = trained["bf16"]
    assert all(p.dtype == torch.float32 for p in bf16.values())  # autocast, not a cast
    assert not torch.equal(bf16[layer], before[layer])  # the Transformer learned
    # The same seed and rows in fp32 end elsewhere: the steps ran in bf16.
    assert not torch.equal(bf16[layer], trained["fp32"][layer])
