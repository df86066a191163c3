"""Model selection on the suite's dev splits: never a test file, never a test sentence."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import fsspec
import numpy as np
import pytest
import torch
from paramine.encoders.evaluation.suite import load_suite
from paramine.encoders.evaluation.suite_eval import model_encoder
from paramine.encoders.modules.lstm_pooling import load_encoder
from paramine.encoders.training.selection import (
    DevSelection,
    dev_scores,
    read_selection_data,
    sample_split,
)
from paramine.pipelines.cli import main as cli_main

from tests.encoders.datasets import WORDS, make_rows, write_dataset

SUITE = """\
name: toy
tasks:
  - {name: ONE, kind: classify, format: label_text,
     train: one/train.txt, dev: one/dev.txt, test: one/test.txt}
  - name: REL
    kind: relatedness
    format: tsv
    columns: {sentence1: a, sentence2: b, score: score}
    train: rel/train.tsv
    dev: rel/dev.tsv
    test: rel/test.tsv
"""


def write_suite(root: Path) -> dict[str, set[str]]:
    """A two-task suite whose test sentences share no word with train and dev; texts by split."""
    rng = random.Random(0)
    vocabulary = {"train": WORDS[:20], "dev": WORDS[:20], "test": WORDS[20:]}
    texts: dict[str, set[str]] = {}
    for split, n in (("train", 40), ("dev", 20), ("test", 20)):

        def sentence(split: str = split) -> str:
            return " ".join(rng.sample(vocabulary[split], 4))

        one = [(str(i % 2), sentence()) for i in range(n)]
        rel = [(sentence(), sentence(), str(i % 6)) for i in range(n)]
        (root / "one").mkdir(parents=True, exist_ok=True)
        (root / "rel").mkdir(parents=True, exist_ok=True)
        (root / "one" / f"{split}.txt").write_text("".join(f"{y} {t}\n" for y, t in one))
        lines = ["a\tb\tscore", *("\t".join(row) for row in rel)]
        (root / "rel" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
        texts[split] = {t for _, t in one} | {a for a, _, _ in rel} | {b for _, b, _ in rel}
    (root / "toy.yaml").write_text(SUITE)
    assert not texts["test"] & (texts["train"] | texts["dev"])
    return texts


def selecting_run(url: str, base: Path, out: Path, root: Path) -> list[str]:
    """`paramine train` arguments: the tiny model, `--recipe small`, dev selection every 2 steps."""
    args = [url, "--base", str(base), "--output", str(out), "--device", "cpu"]
    args += ["--recipe", "small", "--lstm-hidden", "16", "--batch-size", "8", "--eval-share", "0"]
    args += ["--mini-batch-size", "4", "--suite", str(root / "toy.yaml"), "--suite-data", str(root)]
    return [*args, "--select-on", "dev", "--select-every", "2"]


class Watch:
    """Records the files opened and the texts encoded while the trainer trains.

    Wraps the real functions (fsspec.open, the encoder, the trainer's train)
    and calls through: nothing is replaced, only seen.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import paramine.encoders.inference.handler as handler
        from sentence_transformers import SentenceTransformerTrainer

        self.training = False
        self.opened: list[tuple[str, bool]] = []
        self.encoded: list[tuple[str, bool]] = []
        open_file, encode, train = (
            fsspec.open,
            handler.encode_unpadded,
            SentenceTransformerTrainer.train,
        )

        def watched_open(path: Any, *args: Any, **kwargs: Any) -> Any:
            self.opened.append((str(path), self.training))
            return open_file(path, *args, **kwargs)

        def watched_encode(model: Any, texts: list[str], *args: Any, **kwargs: Any) -> Any:
            self.encoded += [(text, self.training) for text in texts]
            return encode(model, texts, *args, **kwargs)

        def watched_train(trainer: Any, *args: Any, **kwargs: Any) -> Any:
            self.training = True
            try:
                return train(trainer, *args, **kwargs)
            finally:
                self.training = False

        monkeypatch.setattr(fsspec, "open", watched_open)
        monkeypatch.setattr(handler, "encode_unpadded", watched_encode)
        monkeypatch.setattr(SentenceTransformerTrainer, "train", watched_train)


@pytest.mark.slow
def test_selection_reads_dev_never_test_and_keeps_the_best(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "suite"
    texts = write_suite(root)
    url = write_dataset(tmp_path / "ds", make_rows(48))
    out = tmp_path / "model"
    args = selecting_run(url, tiny_model_dir, out, root)
    args += ["--max-steps", "4", "--head-lr", "5e-2", "--lr", "1e-3"]
    watch = Watch(monkeypatch)
    assert cli_main(["train", *args]) == 0

    test_files = {str(root / "one" / "test.txt"), str(root / "rel" / "test.tsv")}
    dev_files = {str(root / "one" / "dev.txt"), str(root / "rel" / "dev.tsv")}
    during = {path for path, training in watch.opened if training}
    assert dev_files <= during  # selection read dev while training...
    assert not during & test_files  # ...and never a test file
    encoded_during = {text for text, training in watch.encoded if training}
    assert texts["dev"] <= encoded_during
    assert not encoded_during & texts["test"]
    # The test table came after training, once for the base and the kept model.
    after = {text for text, training in watch.encoded if not training}
    assert texts["test"] <= after

    summary = json.loads((out / "paramine_training.json").read_text())
    selection = summary["selection"]
    history = selection["history"]
    assert [entry["step"] for entry in history] == [0, 2, 4]
    training = summary["training"]
    # Selection's CPU is reported apart from the steps'.
    assert training["selection_cpu_s"] == pytest.approx(sum(e["cpu_s"] for e in history), abs=0.2)
    assert training["cpu_s_per_step"] == pytest.approx(
        (training["cpu_s"] - training["selection_cpu_s"]) / 4
    )
    best = max(history, key=lambda e: e["average"])  # max keeps the earliest of ties
    assert selection["kept_step"] == best["step"]
    assert set(summary["suite"]) == {"name", "encoding", "base", "trained"}
    assert f"Kept the model of step {best['step']} of 4" in (out / "README.md").read_text()

    # Step 0 of --recipe small is the base: selection scored the base's dev figures.
    suite = load_suite(str(root / "toy.yaml"))
    base = load_encoder(str(tiny_model_dir), device="cpu")
    data = read_selection_data(list(suite.tasks), str(root), 1000)
    assert dev_scores(model_encoder(base, "", 64), data)["average"] == history[0]["average"]
    # The saved model is the kept one, bit for bit.
    kept = load_encoder(str(tmp_path / "model-checkpoints" / "selected"), device="cpu")
    saved = load_encoder(str(out), device="cpu")
    sentences = sorted(texts["dev"])[:8]
    torch.testing.assert_close(
        saved.encode(sentences, convert_to_tensor=True),
        kept.encode(sentences, convert_to_tensor=True),
        atol=0,
        rtol=0,
    )


def test_sample_split_is_a_fixed_subset_in_file_order() -> None:
    from paramine.encoders.evaluation.suite import Split

    split = Split([f"t{i}" for i in range(50)], [f"s{i}" for i in range(50)], list(range(50)))
    a, b = sample_split(split, 10, "ONE/train"), sample_split(split, 10, "ONE/train")
    assert a == b and len(a.texts) == 10 and a.labels == sorted(a.labels)
    assert [int(t[1:]) for t in a.texts] == a.labels == [int(s[1:]) for s in a.second]
    assert sample_split(split, 0, "x") is split and sample_split(split, 60, "x") is split


def test_a_resumed_selection_takes_up_its_history(tmp_path: Path) -> None:
    folder = tmp_path / "selected"
    folder.mkdir()
    history = [
        {"step": 0, "average": 50.0, "kept": True},
        {"step": 2, "average": 55.0, "kept": True},
        {"step": 4, "average": 54.0},
    ]
    (folder / "selection.json").write_text(json.dumps({"history": history}))
    selection = DevSelection(None, None, None, 2, str(folder))  # type: ignore[arg-type]
    selection.restore(4)
    assert selection.history == history and selection.best == history[1]
    selection.restore(3)  # step 4 is replayed
    assert [e["step"] for e in selection.history] == [0, 2]
    selection = DevSelection(None, None, None, 2, str(folder))  # type: ignore[arg-type]
    selection.restore(1)  # the saved weights (step 2) are of a replayed step: start afresh
    assert selection.history == []


def test_dev_scores_are_the_probes_dev_figures(tmp_path: Path, tiny_model_dir: Path) -> None:
    from paramine.encoders.evaluation.suite_eval import run_suite

    root = tmp_path / "suite"
    write_suite(root)
    suite = load_suite(str(root / "toy.yaml"))
    encode = model_encoder(load_encoder(str(tiny_model_dir), device="cpu"), "", 64)
    details: dict[str, dict[str, Any]] = {}
    run_suite(encode, suite, str(root), details=details)
    scores = dev_scores(encode, read_selection_data(list(suite.tasks), str(root), 0))
    # Uncapped, selection's figure is the suite's own dev figure for each task.
    for name, figure in scores["tasks"].items():
        assert figure == round(details[name]["dev"], 2)
    assert scores["average"] == round(float(np.mean(list(scores["tasks"].values()))), 2)


@pytest.mark.slow
def test_a_kept_step_0_is_the_base_and_is_not_scored_again(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paramine.encoders.evaluation.suite_eval import evaluate_on_suite

    root = tmp_path / "suite"
    texts = write_suite(root)
    url = write_dataset(tmp_path / "ds", make_rows(48))
    out = tmp_path / "model"
    args = selecting_run(url, tiny_model_dir, out, root)
    # Too slow to move a rounded dev figure: every step ties with step 0, which is kept.
    args += ["--max-steps", "2", "--lr", "1e-12", "--head-lr", "1e-12", "--seeds", "2"]
    # Counted encodings: the base's figures must not come from an earlier test's cache.
    args += ["--no-suite-cache"]
    watch = Watch(monkeypatch)
    assert cli_main(["train", *args]) == 0
    after_training = [text for text, training in watch.encoded if not training]

    summary = json.loads((out / "paramine_training.json").read_text())
    base = summary["suite"]["base"]
    # Step 0 is the base in both seeds: its dev figures were computed once, for seed 42, so
    # the dev sentences were encoded for three scores (42: steps 0 and 2; 43: step 2), not four.
    during = [text for text, training in watch.encoded if training]
    assert {during.count(text) for text in texts["dev"]} == {3}
    first, second = (summary["per_seed"][s]["selection"]["history"][0] for s in ("42", "43"))
    assert first["step"] == second["step"] == 0 and second["reused"] is True
    assert (second["tasks"], second["average"]) == (first["tasks"], first["average"])
    for seed in ("42", "43"):
        assert summary["per_seed"][seed]["selection"]["kept_step"] == 0
        trained = summary["per_seed"][seed]["suite"]
        assert trained["same_as_base"] is True
        assert (trained["tasks"], trained["average"]) == (base["tasks"], base["average"])
    assert summary["suite"]["std"]["average"] == 0.0
    own = json.loads((out / "seed-43" / "paramine_training.json").read_text())
    assert own["suite"]["trained"]["average"] == base["average"]

    # The test sentences were encoded for one model after training (the base), not three.
    watch.encoded.clear()
    suite = load_suite(str(root / "toy.yaml"))
    evaluate_on_suite(load_encoder(str(tiny_model_dir), device="cpu"), suite, str(root), "", 64)
    once = [text for text, _ in watch.encoded if text in texts["test"]]
    assert once and sorted(t for t in after_training if t in texts["test"]) == sorted(once)
