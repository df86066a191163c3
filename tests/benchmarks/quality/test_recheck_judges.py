"""The recheck's two judges on a round's rows: the model in training, and a cross-fitted one."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from paramine.encoders.training.hard_negatives import TrainingRows

from benchmarks.quality.recheck_judges import StopAfter, main, planted_rows
from tests.encoders.datasets import write_scored_dataset
from tests.encoders.training.test_seed_training import adapt_config

WORDS = ["river", "stone", "cloud", "bread", "window", "garden", "letter", "candle"]


def test_a_row_is_planted_where_a_line_of_it_is_not_a_clean_translation() -> None:
    clean = {("P1", "a1"), ("P1", "b1"), ("P2", "a2")}
    rows = TrainingRows(
        anchors=["P1", "P1", "a1", "a1", "P2"],
        positives=["a1", "a2", "b1", "a2", "a2"],
        pivots=["P1", "P1", "P1", "P1", "P2"],
    )
    # aligned true, aligned planted, paraphrase of two true lines, paraphrase holding a
    # planted line (a2 is P2's), aligned true
    assert planted_rows(rows, clean).tolist() == [False, True, False, True, False]


def test_a_run_stopped_after_its_first_epoch_keeps_the_whole_runs_schedule(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    from paramine.encoders.training.seed_training import train_seed
    from paramine.encoders.training.seeds import SeedPlace
    from sentence_transformers import SentenceTransformer

    anchors = [f"the {a} and the {b}" for a in WORDS for b in WORDS[:3]]
    config = adapt_config(tmp_path, tiny_model_dir, batch_size=8, max_steps=30)
    place = SeedPlace(7, str(tmp_path / "model"), str(tmp_path / "checkpoints"))
    base = SentenceTransformer(str(tiny_model_dir), device="cpu")
    columns = {"anchor": anchors, "positive": [a.upper() for a in anchors]}
    _, run = train_seed(config, "fp32", base, "", columns, place, None, {}, [StopAfter(3)])
    assert run["training"]["global_step"] == 3  # one epoch of 24 rows in batches of 8


@pytest.fixture
def noisy_round(tmp_path: Path) -> tuple[str, Path, int]:
    """A pass's dataset: 48 pivots with two clean translations each, and 12 planted lines."""
    clean = tmp_path / "eng-pol"
    clean.mkdir()
    pivots = [f"Pivot sentence number {g}." for g in range(48)]
    translations = [
        (f"the {WORDS[g % 8]} and the {WORDS[g // 8 % 8]} {k}", k) for g in range(48) for k in "ab"
    ]
    (clean / "test.eng").write_text("".join(f"{pivots[g]}\n" for g in range(48) for _ in "ab"))
    (clean / "test.pol").write_text("".join(f"{t}\n" for t, _ in translations))
    pairs = [
        {
            "pair_id": f"p{g:04d}",
            "sentence_a": translations[2 * g][0],
            "sentence_b": translations[2 * g + 1][0],
            "lang": "pl",
            "pivot_sentence": pivots[g],
            "pivot_lang": "en",
            "score_a": 0.99,
            "score_b": 0.99,
            "group_size": 2,
            "corpus": "synthetic",
        }
        for g in range(48)
    ]
    lines = [(pivots[g], translations[2 * g + k][0], 0.99) for g in range(48) for k in (0, 1)]
    planted = [(pivots[g], translations[(2 * g + 31) % 96][0], 0.99) for g in range(0, 48, 4)]
    dataset = write_scored_dataset(tmp_path / "ds", pairs, lines + planted)
    return dataset, clean, len(planted)


def test_the_script_counts_what_each_judge_sets_aside(
    noisy_round: tuple[str, Path, int],
    tiny_model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dataset, clean, planted = noisy_round
    flags = ["--min-steps", "4", "--batch-size", "32", "--precision", "fp32"]
    argv = [dataset, "--clean", str(clean), "--candidate", "pol", "--base", str(tiny_model_dir)]
    argv += ["--workdir", str(tmp_path / "judges"), "--train-flags", " ".join(flags)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    [head] = re.findall(r"^(\d+) rows, (\d+) of them planted$", out, re.M)
    rows = int(head[0])
    # The planted lines of training pivots, and the paraphrase rows are all true here.
    assert 0 < int(head[1]) <= planted
    found = re.findall(
        r"^\| (the model in training[^|]*|a model trained on the other half) \| (\d+) \| "
        r"([\d.]+) \| (\d+) of (\d+) \| (\d+) of (\d+) \|$",
        out,
        re.M,
    )
    assert [(judge[:7], float(share)) for judge, _, share, *_ in found] == [
        ("the mod", 0.05), ("the mod", 0.1), ("the mod", 0.2),
        ("a model", 0.05), ("a model", 0.1), ("a model", 0.2),
    ]  # fmt: skip
    epoch = -(-rows // 32)
    for judge, steps, _, _, p_all, _, t_all in found:  # every row judged once by each judge
        assert (int(p_all), int(p_all) + int(t_all)) == (int(head[1]), rows)
        assert int(steps) == (epoch if judge.startswith("the") else -(-max(4, epoch) // 2))
    # A stricter share of the null sets no fewer rows aside.
    aside = np.array([int(p) + int(t) for _, _, _, p, _, t, _ in found]).reshape(2, 3)
    assert (np.diff(aside, axis=1) <= 0).all()
    listed = out.split("keeps at 0.1")[1].splitlines()[1:]
    assert all(" | " in line for line in listed)
