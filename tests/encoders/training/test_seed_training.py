"""The trainer's arguments as ``paramine train``'s settings make them."""

from __future__ import annotations

from pathlib import Path

from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.seed_training import _training_arguments
from paramine.encoders.training.seeds import SeedPlace


def test_quiet_turns_the_progress_bar_off_and_keeps_the_loss_logged(tmp_path: Path) -> None:
    place = SeedPlace(7, str(tmp_path / "model"), str(tmp_path / "checkpoints"))

    def arguments(**given: object) -> object:
        config = TrainConfig(dataset="d", base="b", output="o", recipe="adapt", **given)
        return _training_arguments(config, "fp32", "", 100, place, {})

    loud, quiet = arguments(), arguments(quiet=True)
    assert (loud.disable_tqdm, quiet.disable_tqdm) == (False, True)
    assert quiet.logging_steps == loud.logging_steps == 10
    assert (quiet.learning_rate, quiet.per_device_train_batch_size, quiet.seed) == (5e-5, 32, 7)
