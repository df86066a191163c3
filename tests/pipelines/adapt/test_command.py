"""``paramine adapt`` end to end with the tiny model: the folders it leaves, and what they hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paramine.pipelines.adapt.command import _without
from paramine.pipelines.adapt.settings import AdaptSettings
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.adapt_record import HELD_OUT_METRICS

from tests.pipelines.formats.helpers import write_moses

WORDS = ["ala", "ma", "kota", "to", "jest", "zdanie", "po", "polsku", "dobry", "wieczór"]


def _corpus(folder: Path) -> Path:
    """60 pivots with two or three candidates each, of words the tiny model knows."""
    pivots, candidates = [], []
    for i in range(60):
        for j in range(2 + i % 2):
            pivots.append(f"Pivot sentence {i}.")
            words = [WORDS[(i + k * j) % len(WORDS)] for k in range(4)]
            candidates.append(" ".join(words) + f" {i}")
    return write_moses(folder, pivots, candidates)


def test_the_loop_flags_are_taken_out_of_mines_command_line() -> None:
    args = ["in.en-pl", "--rounds", "2", "--tgt-lang", "pl", "--train-flags=--epochs 2"]
    assert _without(args, None, AdaptSettings) == ["in.en-pl", "--tgt-lang", "pl"]


@pytest.mark.slow
def test_one_command_leaves_a_dataset_and_an_encoder_that_mines(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sentence_transformers import SentenceTransformer

    shard = _corpus(tmp_path / "in")
    out = tmp_path / "out"
    common = ["--src-lang", "en", "--tgt-lang", "pl", "--quiet", "--backend", "torch"]
    status = cli_main(
        [
            "adapt",
            str(shard),
            *common,
            "--model",
            str(tiny_model_dir),
            "--output",
            str(out),
            "--rounds",
            "1",
            "--min-gain",
            "-100",  # the tiny model's figures are noise: keep its round whatever they say
            "--min-new",
            "0",
            "--held-out",
            "0.2",
            "--train-flags",
            "--batch-size 8 --max-steps 2",
        ]
    )
    assert status == 0
    record = json.loads((out / "adapt.json").read_text())
    assert record["final_round"] == 1 and record["stopped"].startswith("1 rounds")
    [first, second] = record["rounds"]
    assert first["training"] is None and first["mining"]["model"] == str(tiny_model_dir)
    training = second["training"]
    assert training["steps"] == 2 and training["aligned_lines"] > 0
    assert training["dataset"] == first["mining"]["dataset"]
    # The base was read on the held-out lines before round 1 trained, as training reads it.
    assert record["held_out_base"] and record["held_out_base"] == training["held_out_base"]
    assert second["mining"]["model"] == training["encoder"]
    # Round 1's encoder was compared with the base line by line on the held-out lines.
    gain = training["gain"]
    assert gain["against"] == 0 and gain["lines"] > 0 and gain["standard_error"] >= 0
    base_points = 50 * sum(training["held_out_base"][m] for m in HELD_OUT_METRICS)
    points = 50 * sum(training["held_out"][m] for m in HELD_OUT_METRICS)
    assert gain["gain"] == pytest.approx(points - base_points, abs=1e-3)
    # The final dataset holds the rounds; its report shows them.
    manifest = json.loads((out / "dataset" / "manifest.json").read_text())
    assert manifest["extra"]["adapt"]["final_round"] == 1
    assert manifest["model"]["training"]["dataset"] == first["mining"]["dataset"]
    page = (out / "dataset" / "report.html").read_text()
    assert "paramine adapt loop" in page and "Stopped: 1 rounds" in page
    err = capsys.readouterr().err
    assert "paramine adapt: round 1: trained on" in err
    assert "paramine adapt: round 1: comparing its encoder with round 0's line by line" in err
    assert f"points over round 0's encoder, line by line on {gain['lines']:,} held-out" in err
    assert f"encoder: {out / 'encoder'}" in err
    # The encoder loads as any sentence-transformers folder, and mines.
    model = SentenceTransformer(str(out / "encoder"), device="cpu")
    assert model.encode(["ala ma kota"]).shape[0] == 1
    again = tmp_path / "again"
    mine = ["mine", str(shard), *common, "--model", str(out / "encoder"), "--output", str(again)]
    assert cli_main(mine) == 0
    assert json.loads((again / "manifest.json").read_text())["rows"]["pairs"] >= 0
