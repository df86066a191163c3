"""Tests of ``paramine train``: data preparation, a few steps, resume."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest
from paramine.encoders.evaluation.holdout import eval_mask, load_split, split_key
from paramine.encoders.training.data import filter_pairs
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.text_keys import hash_fraction

from tests.encoders.datasets import make_rows, write_dataset
from tests.paths import DATA


def main(argv: list[str]) -> int:
    """``paramine train ARGV`` through the CLI's one error boundary."""
    return cli_main(["train", *argv])


def test_split_key_and_hash_are_stable() -> None:
    assert split_key("  Yes.\u00a0 THANKS ") == split_key("yes thanks")
    assert hash_fraction("yes.") == hash_fraction("yes.")
    assert 0.0 <= hash_fraction("yes.") < 1.0


def test_eval_split_keeps_each_pivot_on_one_side(tmp_path: Path) -> None:
    rows = make_rows(200)
    # Same pivot in two spellings, with several pairs: it must not straddle the split.
    for i in range(0, 40):
        rows[i]["pivot_sentence"] = "Yes." if i % 2 else "  yes. "
    url = write_dataset(tmp_path / "ds", rows)
    held_out = load_split(url, 0.3, "eval")
    kept = load_split(url, 0.3, "train")
    assert len(held_out) + len(kept) == len(rows)
    assert not set(held_out["pivot_sentence"].map(split_key)) & set(
        kept["pivot_sentence"].map(split_key)
    )
    assert 0.15 < len(held_out) / len(rows) < 0.45
    # Deterministic: the same call gives the same rows.
    assert load_split(url, 0.3, "eval")["pair_id"].tolist() == held_out["pair_id"].tolist()
    assert load_split(url, 0.3, "eval", max_rows=5)["pair_id"].tolist() == (
        load_split(url, 0.3, "eval", max_rows=5)["pair_id"].tolist()
    )
    assert len(load_split(url, 0.3, "eval", max_rows=5)) == 5


def test_eval_mask_rejects_bad_share() -> None:
    import pandas as pd

    with pytest.raises(ValueError, match="eval-share"):
        eval_mask(pd.Series(["a"]), 1.0)


def test_filters_count_drops_by_reason() -> None:
    import pandas as pd

    df = pd.DataFrame(
        {
            "sentence_a": ["Ala ma kota.", "Ala ma kota", "Dobry wieczór", "Jak się masz?"],
            "sentence_b": ["Kot ma Alę.", "ala ma  kota", "Dobry wieczór!", "Co słychać?"],
            "score_a": [0.70, 0.95, 0.90, 0.99],
            "score_b": [0.90, 0.86, 0.90, 0.85],
        }
    )
    kept, dropped = filter_pairs(df, min_score=0.8, max_score=0.88, near_identical_threshold=0.9)
    # row 0: min 0.70 < 0.8; row 2: min 0.90 > 0.88; row 1: identical after normalizing.
    assert dropped == {"below_min_score": 1, "above_max_score": 1, "near_identical": 1}
    assert kept.index.tolist() == [3]
    kept, dropped = filter_pairs(df, near_identical_threshold=0.9)
    assert dropped == {"near_identical": 2}
    assert kept.index.tolist() == [0, 3]


def test_dataset_without_manifest_is_refused(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = write_dataset(tmp_path / "ds", make_rows(8), with_manifest=False)
    status = main([url, "--base", str(tiny_model_dir), "--output", str(tmp_path / "out")])
    assert status == 2
    assert "manifest.json" in capsys.readouterr().err


def mnrl_loss(model_dir: str, rows: list[dict]) -> float:
    """Mean in-batch ranking loss of a saved model over all rows in one batch."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    # The trainer's folder loads with plain SentenceTransformer (the acceptance line).
    model = SentenceTransformer(model_dir, device="cpu")
    assert type(model[1]).__name__ == "LSTMPooling"
    loss = MultipleNegativesRankingLoss(model)
    features = [
        model.tokenize([r["sentence_a"] for r in rows]),
        model.tokenize([r["sentence_b"] for r in rows]),
    ]
    with torch.no_grad():
        return float(loss(features, None))


@pytest.mark.slow
def test_training_lowers_the_loss_and_resumes(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = make_rows(48)
    url = write_dataset(tmp_path / "ds", rows)
    out = tmp_path / "model"
    checkpoints = tmp_path / "model-checkpoints"
    common = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
    common += ["--lstm-hidden", "32", "--batch-size", "8", "--lr", "5e-3", "--save-steps", "4"]
    common += ["--eval-share", "0.2", "--logging-steps", "1", "--seed", "1"]
    assert main([*common, "--max-steps", "4"]) == 0

    summary = json.loads((out / "paramine_training.json").read_text())
    assert summary["training"]["global_step"] == 4
    # The model folder holds the model only; checkpoints live beside it.
    assert (checkpoints / "checkpoint-4").is_dir()
    assert not list(out.glob("checkpoint-*"))
    counts = summary["counts"]
    assert counts["rows_read"] == 48
    assert counts["train_rows"] + counts["eval_pivots_rows"] == 48
    assert set(summary["results"]) == {"base", "trained"}
    assert "held-out pivots top1" in summary["results"]["trained"]
    # The before/after table is printed at the end and written into the card.
    printed = capsys.readouterr().out
    assert "| held-out pivots top1 |" in printed
    card = (out / "README.md").read_text()
    assert "| held-out pivots top1 |" in card and url in card
    # sentence-transformers' own card, with the true steps and epochs: 4 steps
    # of 8 over the training pairs, not the default "3 epochs".
    assert "library_name: sentence-transformers" in card
    epochs = 4 / -(-counts["train_rows"] // 8)
    assert f"Steps: 4, epochs: {epochs:.2f}" in card
    assert "pip install paramine" not in card

    # Without --resume an output with checkpoints is refused rather than mixed.
    assert main([*common, "--max-steps", "8"]) == 2

    train_rows = [r for r in rows if r["pair_id"] in set(load_split(url, 0.2, "train")["pair_id"])]
    loss_after_4 = mnrl_loss(str(out), train_rows)
    assert main([*common, "--max-steps", "8", "--resume"]) == 0
    summary = json.loads((out / "paramine_training.json").read_text())
    assert summary["training"]["global_step"] == 8
    assert summary["settings"]["resumed_from"].endswith("checkpoint-4")
    state = json.loads((checkpoints / "checkpoint-8" / "trainer_state.json").read_text())
    # --save-total-limit 2 (the default) pruned nothing yet: 4 and 8 are kept.
    assert sorted(p.name for p in checkpoints.iterdir()) == ["checkpoint-4", "checkpoint-8"]
    assert state["global_step"] == 8
    # The resumed run only logged steps 5..8: the step count continued.
    steps = [e["step"] for e in state["log_history"] if "loss" in e]
    assert steps == list(range(1, 9))

    loss_after_8 = mnrl_loss(str(out), train_rows)
    initial = tmp_path / "initial"
    # The same model before any step: --max-steps would train, so build it directly.
    from paramine.encoders.modules.lstm_pooling import LSTMPooling
    from sentence_transformers import SentenceTransformer

    torch_seed(1)
    base = SentenceTransformer(str(tiny_model_dir), device="cpu")
    untrained = SentenceTransformer(
        modules=[base[0], LSTMPooling(base[0].get_embedding_dimension(), 32)], device="cpu"
    )
    untrained.save(str(initial))
    loss_before = mnrl_loss(str(initial), train_rows)
    assert loss_after_8 < loss_after_4 < loss_before


@pytest.mark.slow
def test_the_trainer_scores_the_loss_directions_it_is_given(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """``--loss-directions`` reaches the loss the steps minimize, not only the record.

    Same seed, same rows, same first batch: the first step's loss is the
    untrained model's, and each added contest puts more negatives in every
    softmax, so ``forward < both < all`` (as ``test_modeling`` computes by hand).
    """
    url = write_dataset(tmp_path / "ds", make_rows(48))
    first: dict[str, float] = {}
    for directions in ("forward", "both", "all"):
        out = tmp_path / directions
        argv = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
        argv += ["--lstm-hidden", "32", "--batch-size", "8", "--max-steps", "1"]
        argv += ["--logging-steps", "1", "--seed", "1", "--loss-directions", directions]
        assert main(argv) == 0
        summary = json.loads((out / "paramine_training.json").read_text())
        assert summary["settings"]["loss_directions"] == directions
        first[directions] = summary["training"]["first_logged_loss"]
    assert first["forward"] < first["both"] < first["all"]


def torch_seed(seed: int) -> None:
    import torch

    torch.manual_seed(seed)


@pytest.mark.gpu
def test_mixed_precision_training_on_gpu(tmp_path: Path, tiny_model_dir: Path) -> None:
    import torch

    precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    url = write_dataset(tmp_path / "ds", make_rows(48))
    out = tmp_path / "model"
    args = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cuda"]
    args += ["--precision", precision, "--lstm-hidden", "32", "--batch-size", "8"]
    assert main([*args, "--max-steps", "3", "--lr", "5e-3", "--bidirectional"]) == 0
    summary = json.loads((out / "paramine_training.json").read_text())
    assert summary["settings"]["precision"] == precision
    assert summary["training"]["global_step"] == 3
    assert summary["training"]["device"].startswith("cuda")
    # Saved from the GPU, loaded on the CPU: the weights came back whole.
    from paramine.encoders.modules.lstm_pooling import load_encoder

    model = load_encoder(str(out), device="cpu")
    assert model.encode(["ala ma kota"]).shape == (1, 64)


def test_training_scores_bitext_and_sts_and_prunes_checkpoints(
    tmp_path: Path, tiny_model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = write_dataset(tmp_path / "ds", make_rows(40))
    rows = make_rows(12, seed=3)
    (tmp_path / "bi.pl").write_text("".join(r["sentence_a"] + "\n" for r in rows))
    (tmp_path / "bi.en").write_text("".join(r["sentence_b"] + "\n" for r in rows))
    out = tmp_path / "model"
    args = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
    args += ["--lstm-hidden", "16", "--batch-size", "8", "--max-steps", "3", "--save-steps", "1"]
    args += ["--save-total-limit", "1", "--checkpoint-dir", str(tmp_path / "ckpt")]
    args += ["--eval-bitext", str(tmp_path / "bi.pl"), str(tmp_path / "bi.en")]
    args += ["--eval-sts", str(DATA / "sts_tiny.tsv"), "--eval-share", "0.2"]
    with caplog.at_level(logging.WARNING):
        assert main(args) == 0
    # 40 pairs, share 0.2: far fewer held out than a meaningful retrieval needs.
    held_out = json.loads((out / "paramine_training.json").read_text())["counts"]
    assert f"only {held_out['eval_pivots_rows']} held-out pairs" in caplog.text
    results = json.loads((out / "paramine_training.json").read_text())["results"]
    for when in ("base", "trained"):
        metrics = results[when]
        assert set(metrics) >= {
            "bitext pl-en src2trg",
            "bitext pl-en trg2src",
            "STS sts_tiny spearman",
            "held-out pivots top1",
        }
        assert all(-1.0 <= value <= 1.0 for value in metrics.values())
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["checkpoint-3"]
    # The model folder: the model, its card and the run summary; nothing else.
    names = {p.name for p in out.iterdir()}
    assert {"modules.json", "1_LSTMPooling", "README.md", "paramine_training.json"} <= names
    assert not [name for name in names if "checkpoint" in name or name.startswith(".")]
    assert not (tmp_path / "model.building").exists()


def test_output_with_foreign_files_is_refused(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = write_dataset(tmp_path / "ds", make_rows(16))
    out = tmp_path / "notes"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    status = main([url, "--base", str(tiny_model_dir), "--output", str(out)])
    assert status == 2
    assert "holds no paramine model" in capsys.readouterr().err
    assert (out / "thesis.tex").read_text() == "mine"


def test_pairs_sharing_a_sentence_with_the_evaluation_data_are_dropped(tmp_path: Path) -> None:
    from paramine.encoders.evaluation.eval_files import Bitext
    from paramine.encoders.training.config import TrainConfig
    from paramine.encoders.training.data import EvalData, prepare_data
    from paramine.schemas.text_keys import comparison_key

    rows = make_rows(40)
    url = write_dataset(tmp_path / "ds", rows)
    config = TrainConfig(dataset=url, base="b", output="o", eval_share=0.2)
    held_out = eval_mask(pd.Series([r["pivot_sentence"] for r in rows]), 0.2).tolist()
    training = [r for r, out in zip(rows, held_out, strict=True) if not out]
    assert any(held_out) and len(training) >= 10
    # Three training sentences, as an evaluation file would hold them:
    # other case, other punctuation, other spacing.
    seen = [training[0]["sentence_a"], training[5]["sentence_b"], training[9]["sentence_a"]]
    in_eval = [text.upper() + " !" for text in seen]
    bitext = Bitext("pl-en", [*in_eval, "zdanie"], ["a", "b", "c", "d"])
    data = prepare_data(config, EvalData(bitexts=[bitext]))
    keys = {comparison_key(text) for text in seen}
    kept = {
        comparison_key(t)
        for t in data.train["sentence_a"].tolist() + data.train["sentence_b"].tolist()
    }
    assert not keys & kept
    dropped = data.counts["train_dropped"]["eval_overlap"]
    assert dropped >= 3
    assert data.counts["train_rows"] == data.counts["train_rows_before_filters"] - dropped
    # --keep-eval-overlap keeps them, and says nothing was dropped for it.
    kept_all = prepare_data(
        TrainConfig(dataset=url, base="b", output="o", eval_share=0.2, keep_eval_overlap=True),
        EvalData(bitexts=[bitext]),
    )
    assert "eval_overlap" not in kept_all.counts["train_dropped"]
    assert kept_all.counts["train_rows"] == data.counts["train_rows"] + dropped


@pytest.mark.slow
def test_training_scores_the_suite_before_and_after(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.encoders.evaluation.test_suite import _words_suite

    monkeypatch.setenv("PARAMINE_CACHE", str(tmp_path / "cache"))
    _words_suite(tmp_path)
    url = write_dataset(tmp_path / "ds", make_rows(40))
    out = tmp_path / "model"
    args = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
    args += ["--lstm-hidden", "16", "--batch-size", "8", "--max-steps", "2", "--eval-share", "0"]
    args += ["--suite", str(tmp_path / "toy.yaml"), "--suite-data", str(tmp_path)]
    assert main(args) == 0
    summary = json.loads((out / "paramine_training.json").read_text())
    suite = summary["suite"]
    assert suite["name"] and set(suite) == {"name", "encoding", "base", "trained"}
    # Scored with torch, as paramine evaluate --backend torch scores.
    assert suite["encoding"].startswith("torch|none|cpu|float32|")
    for when in ("base", "trained"):
        assert list(suite[when]["tasks"]) == ["ONE", "PAIR", "REL"]
        assert 0.0 <= suite[when]["average"] <= 100.0
    # The suite's sentences count as evaluation data.
    assert summary["counts"]["eval_sentences"] > 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| model | avg | ONE | PAIR | REL |" in card
    assert "(encoded with torch, float32, on cpu):" in card
    assert f"| {tiny_model_dir} (base) | {suite['base']['average']:.2f} |" in card
    assert "Evaluation data kept out of training" in card
    assert "cached" not in suite["base"]
    # The next run with the same base reads the base's figures from the cache.
    again = tmp_path / "again"
    assert main([*args[:4], str(again), *args[5:]]) == 0
    base = json.loads((again / "paramine_training.json").read_text())["suite"]["base"]
    assert base.pop("cached")
    assert base == suite["base"]


@pytest.mark.slow
def test_seeds_report_mean_and_spread(tmp_path: Path, tiny_model_dir: Path) -> None:
    from tests.encoders.training.test_selection import write_suite

    root = tmp_path / "suite"
    write_suite(root)
    url = write_dataset(tmp_path / "ds", make_rows(48))
    out = tmp_path / "model"
    args = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
    args += ["--lstm-hidden", "16", "--batch-size", "8", "--max-steps", "2", "--lr", "5e-3"]
    args += ["--eval-share", "0.2", "--suite", str(root / "toy.yaml"), "--suite-data", str(root)]
    args += ["--seeds", "2", "--seed", "7"]
    assert main(args) == 0
    # Each seed's model in its own folder, with its own checkpoints.
    for seed in (7, 8):
        own = json.loads((out / f"seed-{seed}" / "paramine_training.json").read_text())
        assert own["settings"]["seed"] == seed and own["training"]["global_step"] == 2
        assert (tmp_path / "model-checkpoints" / f"seed-{seed}" / "checkpoint-2").is_dir()
    summary = json.loads((out / "paramine_training.json").read_text())
    assert summary["seeds"] == [7, 8]
    assert summary["suite"]["encoding"].startswith("torch|none|cpu|float32|")
    per_seed = [summary["per_seed"][s]["suite"] for s in ("7", "8")]
    averages = [result["average"] for result in per_seed]
    assert summary["suite"]["mean"]["average"] == round(sum(averages) / 2, 2)
    # The sample standard deviation: |a - b| / sqrt(2) for two values.
    assert summary["suite"]["std"]["average"] == round(abs(averages[0] - averages[1]) / 2**0.5, 2)
    for task in ("ONE", "REL"):
        values = [result["tasks"][task] for result in per_seed]
        assert summary["suite"]["mean"]["tasks"][task] == round(sum(values) / 2, 2)
    retrieval = summary["results"]
    assert set(retrieval) == {"base", "mean", "std"}
    assert "held-out pivots top1" in retrieval["mean"]
    readme = (out / "README.md").read_text()
    assert "| mean of 2 seeds |" in readme and "| sample std |" in readme
    assert "| seed 7 |" in readme and "| seed 8 |" in readme
