"""The held-out lines ``paramine adapt`` judges a round on, and two encoders compared on them."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.data import HELD_OUT_LINES, EvalData, prepare_data
from paramine.encoders.training.held_out import compare_encoders, held_out_lines

from tests.encoders.datasets import WORDS, make_rows, write_scored_dataset


def _dataset(folder: Path) -> str:
    lines = [
        (f"Pivot sentence {i}.", " ".join(WORDS[(i + k * 7) % len(WORDS)] for k in range(5)), 0.99)
        for i in range(300)
    ]
    return write_scored_dataset(folder, make_rows(40), lines)


def _config(url: str, base: str, share: float = 0.2) -> TrainConfig:
    return TrainConfig(
        dataset=url, base=base, output="o", recipe="adapt", eval_share=share, device="cpu"
    )


def test_the_lines_are_those_the_training_scores(tmp_path: Path) -> None:
    config = _config(_dataset(tmp_path / "ds"), "b")
    evaluation = EvalData()
    prepare_data(config, evaluation)
    [trained_on] = [b for b in evaluation.bitexts if b.name == HELD_OUT_LINES]
    found = held_out_lines(config)
    assert found is not None and len(found.source) > 20
    assert (found.source, found.target) == (trained_on.source, trained_on.target)
    assert held_out_lines(_config(config.dataset, "b", share=0.001)) is None


@pytest.mark.slow
def test_an_encoder_against_itself_gains_nothing(tmp_path: Path, tiny_model_dir: Path) -> None:
    config = _config(_dataset(tmp_path / "ds"), str(tiny_model_dir))
    lines = held_out_lines(config)
    assert lines is not None
    found = compare_encoders(config, None, str(tiny_model_dir))
    assert found is not None and found.lines == len(lines.source)
    assert (found.gain, found.standard_error, found.changed) == (0.0, 0.0, 0)
    assert compare_encoders(_config(config.dataset, str(tiny_model_dir), 0.001), None, "x") is None
