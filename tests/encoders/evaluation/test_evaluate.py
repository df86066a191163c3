"""Tests of the evaluators (each on the tiny model), the readers, the table and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from paramine.encoders.evaluation.eval_files import Bitext, StsData, read_bitext, read_sts_tsv
from paramine.encoders.evaluation.evaluate import (
    bitext_task,
    evaluate_model,
    results_table,
    retrieval_task,
    sts_task,
)
from paramine.encoders.models.resolve import prompt_applied
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.errors import InputError
from sentence_transformers import SentenceTransformer

from tests.encoders.datasets import make_rows, write_dataset
from tests.paths import DATA

TEXTS = [r["sentence_a"] for r in make_rows(12, seed=5)]


def main(argv: list[str]) -> int:
    """``paramine evaluate ARGV`` through the CLI's one error boundary."""
    return cli_main(["evaluate", *argv])


@pytest.fixture(scope="module")
def tiny(tiny_model_dir: Path) -> SentenceTransformer:
    return SentenceTransformer(str(tiny_model_dir), device="cpu")


def test_bitext_retrieval_both_directions(tiny: SentenceTransformer) -> None:
    # A text is its own nearest neighbour: every "translation" is found.
    same = bitext_task(Bitext("xx-yy", TEXTS, TEXTS))
    assert evaluate_model(tiny, [same]) == {
        "bitext xx-yy src2trg": 1.0,
        "bitext xx-yy trg2src": 1.0,
    }
    # Misaligned by one line: the right target is elsewhere, so accuracy drops.
    shifted = bitext_task(Bitext("xx-yy", TEXTS, TEXTS[1:] + TEXTS[:1]))
    scores = evaluate_model(tiny, [shifted])
    assert scores["bitext xx-yy src2trg"] < 0.5
    assert scores["bitext xx-yy trg2src"] < 0.5


def test_sts_spearman_against_the_models_own_cosines(tiny: SentenceTransformer) -> None:
    first, second = TEXTS[:6], TEXTS[6:]
    a = tiny.encode(first, normalize_embeddings=True)
    b = tiny.encode(second, normalize_embeddings=True)
    gold = np.sum(a * b, axis=1).tolist()
    # Gold scores ranked exactly as the model ranks them: Spearman 1; reversed: -1.
    perfect = sts_task(StsData(first, second, gold), "own")
    reversed_ = sts_task(StsData(first, second, [-g for g in gold]), "own")
    assert evaluate_model(tiny, [perfect])["STS own spearman"] == pytest.approx(1.0)
    assert evaluate_model(tiny, [reversed_])["STS own spearman"] == pytest.approx(-1.0)


def test_paraphrase_retrieval_counts_the_pivots_other_candidates_as_right(
    tiny: SentenceTransformer,
) -> None:
    pairs = pd.DataFrame(
        {
            "sentence_a": TEXTS[:4],
            "sentence_b": TEXTS[:4],
            "pivot_sentence": ["p1", "p2", "p3", "p4"],
        }
    )
    scores = evaluate_model(tiny, [retrieval_task(pairs)])
    assert scores["held-out pivots top1"] == 1.0
    assert scores["held-out pivots mrr@10"] == 1.0
    # Queries 0 and 1 swap their documents: wrong, unless they share a pivot,
    # where the other candidate is a paraphrase too.
    swapped = pairs.assign(sentence_b=[TEXTS[1], TEXTS[0], TEXTS[2], TEXTS[3]])
    assert evaluate_model(tiny, [retrieval_task(swapped)])["held-out pivots top1"] == 0.5
    grouped = swapped.assign(pivot_sentence=["Yes.", "yes", "p3", "p4"])  # one split key
    assert evaluate_model(tiny, [retrieval_task(grouped)])["held-out pivots top1"] == 1.0


def test_prefix_is_applied_once(tiny: SentenceTransformer) -> None:
    plain = tiny.encode(["query: ala ma kota"])
    with prompt_applied(tiny, "query: "):
        prefixed = tiny.encode(["ala ma kota"])
    np.testing.assert_allclose(prefixed, plain, atol=1e-6)
    assert tiny.default_prompt_name is None and "paramine-prefix" not in tiny.prompts


def test_read_sts_tsv() -> None:
    sts = read_sts_tsv(str(DATA / "sts_tiny.tsv"))
    assert len(sts.sentence1) == len(sts.sentence2) == len(sts.scores) == 6
    assert sts.sentence1[0] == "ala ma kota"
    assert sts.scores[0] == 5.0


def test_read_sts_tsv_names_the_bad_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\t1.0\nc\td\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv:2: expected 3"):
        read_sts_tsv(str(bad))


def test_read_bitext_pair_of_files_and_tsv(tmp_path: Path) -> None:
    (tmp_path / "t.pol-eng.pol").write_text("Ala ma kota.\n\nDobry wieczór.\nTak.\n")
    (tmp_path / "t.pol-eng.eng").write_text("Ala has a cat.\nx\nGood evening.\nYes.\n")
    bitext = read_bitext([str(tmp_path / "t.pol-eng.pol"), str(tmp_path / "t.pol-eng.eng")])
    assert bitext.name == "pol-eng"
    # The pair with a blank side is not a pair.
    assert bitext.source == ["Ala ma kota.", "Dobry wieczór.", "Tak."]
    assert bitext.target == ["Ala has a cat.", "Good evening.", "Yes."]
    (tmp_path / "b.tsv").write_text("a\tb\nc\td\n")
    assert read_bitext([str(tmp_path / "b.tsv")]) == Bitext("b", ["a", "c"], ["b", "d"])
    (tmp_path / "short.eng").write_text("one\n")
    with pytest.raises(ValueError, match=r"has 4 lines but .* has 1"):
        read_bitext([str(tmp_path / "t.pol-eng.pol"), str(tmp_path / "short.eng")])


def test_unreadable_evaluation_files_are_named(tmp_path: Path) -> None:
    # One line naming the option and the file, not a traceback.
    with pytest.raises(InputError, match=r"^--eval-bitext: .*missing\.tsv does not exist$"):
        read_bitext([str(tmp_path / "missing.tsv")])
    with pytest.raises(InputError, match=r"^--eval-bitext: .* is a folder; give a file$"):
        read_bitext([str(tmp_path), str(tmp_path)])
    latin = tmp_path / "latin1.tsv"
    latin.write_bytes("zażółć\tgęślą\t1\n".encode("iso-8859-2"))
    with pytest.raises(InputError, match=r"^--eval-sts: .*latin1\.tsv is not UTF-8 text"):
        read_sts_tsv(str(latin))
    with pytest.raises(InputError, match=r"^--eval-sts: .*nope\.tsv does not exist$"):
        read_sts_tsv(str(tmp_path / "nope.tsv"))


def test_laser_tatoeba_bitext_reads_1000_pairs(shared_corpora: Path) -> None:
    folder = shared_corpora / "laser_tatoeba_v1"
    bitext = read_bitext([str(folder / "tatoeba.pol-eng.pol"), str(folder / "tatoeba.pol-eng.eng")])
    assert (bitext.name, len(bitext.source), len(bitext.target)) == ("pol-eng", 1000, 1000)


def test_results_table() -> None:
    table = results_table(
        [
            ("base", {"bitext x src2trg": 0.5, "STS s spearman": 0.25}),
            ("new", {"bitext x src2trg": 0.75}),
        ]
    )
    assert table.splitlines() == [
        "| metric | pairs | base | new | change |",
        "|---|---:|---:|---:|---:|",
        "| bitext x src2trg | - | 0.5000 | 0.7500 | +0.2500 |",
        "| STS s spearman | - | 0.2500 | - | - |",
    ]


def test_cli_scores_models_on_a_dataset_bitext_and_sts(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = write_dataset(tmp_path / "ds", make_rows(40))
    (tmp_path / "b.tsv").write_text("".join(f"{t}\t{t}\n" for t in TEXTS))
    status = main(
        [
            *(str(tiny_model_dir), "--base", str(tiny_model_dir)),
            *("--dataset", url, "--split", "all", "--eval-bitext", str(tmp_path / "b.tsv")),
            *("--eval-sts", str(DATA / "sts_tiny.tsv"), "--json", str(tmp_path / "r.json")),
        ]
    )
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"| metric | pairs | {tiny_model_dir} (base) | {tiny_model_dir} | change |"
    assert lines[2].startswith("| held-out pivots top1 | 40 |")
    assert "| bitext b src2trg | 12 | 1.0000 | 1.0000 | +0.0000 |" in lines
    results = json.loads((tmp_path / "r.json").read_text())
    assert results[0] | {"model": ""} == results[1] | {"model": ""}  # the same model twice
    assert -1.0 <= results[0]["STS sts_tiny spearman"] <= 1.0


def test_cli_refuses_a_dataset_without_manifest(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = write_dataset(tmp_path / "ds", make_rows(4), with_manifest=False)
    assert main([str(tiny_model_dir), "--dataset", url]) == 2
    assert "manifest.json" in capsys.readouterr().err
