"""``--recipe adapt``: aligned pairs beside paraphrases, held-out lines, mine -> train -> mine."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from paramine.encoders.evaluation.eval_files import held_out_bitexts
from paramine.encoders.evaluation.holdout import eval_mask, split_key
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.hard_negatives import training_rows
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.text_keys import hash_fraction

from tests.encoders.datasets import make_rows, write_dataset


def test_the_adapt_recipe_trains_on_paraphrases_and_their_aligned_pairs() -> None:
    config = TrainConfig(dataset="d", base="b", output="o", recipe="adapt")
    assert (config.pooling, config.lr, config.batch_size, config.epochs) == (
        "lstm-residual",
        5e-5,
        32,
        1.0,
    )
    assert (config.loss, config.loss_directions, config.train_on) == ("mnrl", "both", "both")
    assert TrainConfig(dataset="d", base="b", output="o", recipe="small").loss_directions == (
        "forward"
    )
    assert TrainConfig(dataset="d", base="b", output="o").train_on == "paraphrases"  # paper
    assert TrainConfig(
        dataset="d", base="b", output="o", recipe="adapt", train_on="bitext"
    ).train_on == ("bitext")


def test_rows_of_each_kind() -> None:
    train = pd.DataFrame(
        {
            "pivot_sentence": ["Hi.", "Hi.", "Bye."],
            "sentence_a": ["Cześć.", "Siema.", "Pa."],
            "sentence_b": ["Siema.", "Hej.", "Do widzenia."],
        }
    )
    assert training_rows(train, "paraphrases") == (
        ["Cześć.", "Siema.", "Pa."],
        ["Siema.", "Hej.", "Do widzenia."],
        ["Hi.", "Hi.", "Bye."],
    )
    # Each aligned pair once: (Hi., Siema.) is carried by both of the first rows.
    anchors, positives, pivots = training_rows(train, "bitext")
    assert list(zip(anchors, positives, strict=True)) == [
        ("Hi.", "Cześć."),
        ("Hi.", "Siema."),
        ("Bye.", "Pa."),
        ("Hi.", "Hej."),
        ("Bye.", "Do widzenia."),
    ]
    assert pivots == anchors  # an aligned row's group is its own pivot's
    both = training_rows(train, "both")
    assert len(both.anchors) == len(both.pivots) == 3 + 5
    assert both.pivots[:3] == ["Hi.", "Hi.", "Bye."]


def test_the_aligned_pairs_of_a_dataset_never_hold_a_held_out_pivot(tmp_path: Path) -> None:
    from paramine.encoders.training.data import prepare_data

    rows = make_rows(300)
    url = write_dataset(tmp_path / "ds", rows)
    config = TrainConfig(
        dataset=url,
        base="b",
        output=str(tmp_path / "o"),
        recipe="adapt",
        eval_share=0.3,
        aligned_rows="written",
    )
    data = prepare_data(config)
    anchors = training_rows(data.train, "bitext").anchors
    held = {
        split_key(r["pivot_sentence"])
        for r in rows
        if hash_fraction(split_key(r["pivot_sentence"])) < 0.3
    }
    assert held, "the split holds pivots out"
    assert not {split_key(a) for a in anchors} & held
    assert len(anchors) == 2 * len(data.train)  # a and b differ in every synthetic row
    assert eval_mask(data.eval["pivot_sentence"], 0.3).all()


def test_held_out_lines_make_a_bitext_set_and_a_paraphrase_set(tmp_path: Path) -> None:
    pivots, candidates = [], []
    for i in range(400):
        for j in range(1 + i % 3):  # one, two or three translations
            pivots.append(f"Pivot sentence {i}.")
            candidates.append(f"zdanie {i} wersja {j}")
    (tmp_path / "t.eng").write_text("\n".join(pivots) + "\n")
    (tmp_path / "t.kab").write_text("\n".join(candidates) + "\n")
    translations, paraphrases = held_out_bitexts(
        [str(tmp_path / "t.eng"), str(tmp_path / "t.kab")], 0.25
    )
    assert (
        translations.name == "held-out eng-kab" and paraphrases.name == "held-out paraphrases kab"
    )
    held = [p for p in dict.fromkeys(pivots) if hash_fraction(split_key(p)) < 0.25]
    assert translations.source == held
    assert all(t.endswith("wersja 0") for t in translations.target)
    # A pivot with two or more translations gives one paraphrase pair, first against second.
    several = [p for p in held if int(p.split()[2].rstrip(".")) % 3]
    assert len(paraphrases.source) == len(several)
    assert all(
        a.endswith("wersja 0") and b.endswith("wersja 1")
        for a, b in zip(paraphrases.source, paraphrases.target, strict=True)
    )


GROUPS = [
    ("Where is the station?", ["Gdzie jest dworzec?", "Gdzie jest stacja?"]),
    ("I like coffee.", ["Lubię kawę.", "Kocham kawę."]),
    ("Good morning.", ["Dzień dobry.", "Dobry dzień."]),
    ("How are you?", ["Jak się masz?", "Co słychać?"]),
    ("Thank you very much.", ["Dziękuję bardzo.", "Bardzo dziękuję."]),
    ("I am tired.", ["Jestem zmęczony.", "Jestem zmęczona."]),
]


@pytest.mark.slow
def test_mine_train_mine_records_the_first_pass(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.pipelines.formats.helpers import write_moses

    rows = [(pivot, candidate) for pivot, cands in GROUPS * 6 for candidate in cands]
    # Six copies of each group, each pivot its own (numbered) sentence.
    numbered = [(f"{p[:-1]} {i // 12}{p[-1]}", c) for i, (p, c) in enumerate(rows)]
    shard = write_moses(tmp_path / "in", [p for p, _ in numbered], [c for _, c in numbered])
    common = ["--src-lang", "en", "--tgt-lang", "pl", "--threshold", "0.0", "--quiet"]
    first = tmp_path / "first"
    model_flags = ["--model", str(tiny_model_dir), "--write-scored"]
    assert cli_main(["mine", str(shard), *common, *model_flags, "--output", str(first)]) == 0
    model = tmp_path / "model"
    args = [str(first), "--base", str(tiny_model_dir), "--output", str(model), "--device", "cpu"]
    args += ["--recipe", "adapt", "--batch-size", "4", "--max-steps", "2", "--eval-share", "0"]
    assert cli_main(["train", *args]) == 0
    second = tmp_path / "second"
    capsys.readouterr()
    mine = ["mine", str(shard), *common, "--model", str(model), "--backend", "torch"]
    assert cli_main([*mine, "--output", str(second)]) == 0
    manifest = json.loads((second / "manifest.json").read_text())
    training = manifest["model"]["training"]
    assert training["dataset"] == str(first)
    assert (training["recipe"], training["train_on"], training["global_step"]) == (
        "adapt",
        "both",
        2,
    )
    assert training["loss_directions"] == "both"
    stats = json.loads((second / "stats.json").read_text())["first_pass"]
    first_ids = set(pd.read_parquet(first / "pairs")["pair_id"])
    second_ids = set(pd.read_parquet(second / "pairs")["pair_id"])
    assert stats["also_in_first_pass"] == len(first_ids & second_ids)
    assert stats["new"] == len(second_ids - first_ids)
    assert stats["first_pass_pairs"] == len(first_ids)
    assert "PostFilter" in stats["dropped"] or "GroupByPivot" in stats["dropped"]
    err = capsys.readouterr().err
    assert f"also in the first pass ({first})" in err
    page = (second / "report.html").read_text()
    assert "Second pass" in page and str(first) in page
