"""Tests of the evaluator: metrics on hand-made cases, STS reading, the CLI."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from encoders.evaluate import (
    average_ranks,
    main,
    read_sts_tsv,
    reciprocal_ranks,
    results_table,
    retrieval_metrics,
    spearman,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def test_retrieval_metrics_on_a_hand_made_case() -> None:
    # Query 0 finds document 0 first; query 1 ranks document 0 above document 1
    # (rank 2); query 2 ranks documents 0 and 1 above document 2 (rank 3).
    queries = np.array([[1.0, 0.0], [1.0, 0.1], [1.0, 0.0]])
    documents = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    np.testing.assert_allclose(reciprocal_ranks(queries, documents), [1.0, 0.5, 1 / 3])
    metrics = retrieval_metrics(queries, documents)
    assert metrics["pairs"] == 3
    assert metrics["top1"] == pytest.approx(1 / 3)
    assert metrics["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)


def test_filtered_ranking_ignores_the_same_pivot_group() -> None:
    queries = np.array([[1.0, 0.0], [1.0, 0.1], [1.0, 0.0]])
    documents = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    # Queries 0 and 1 share a pivot: document 0 no longer outranks query 1's
    # answer (rank 1); query 2 is alone, still rank 3.
    np.testing.assert_allclose(
        reciprocal_ranks(queries, documents, ["p", "p", "q"]), [1.0, 1.0, 1 / 3]
    )
    assert retrieval_metrics(queries, documents, ["p", "p", "q"])["top1"] == pytest.approx(2 / 3)


def test_retrieval_is_by_cosine_and_ties_do_not_count_against() -> None:
    queries = np.array([[2.0, 0.0], [0.0, 5.0]])
    documents = np.array([[0.0, 3.0], [0.0, 3.0]])  # the same text twice
    # Query 1's document ties with document 0: rank 1. Query 0 is orthogonal to
    # both, a tie again: rank 1 (scale never matters, only the angle).
    assert retrieval_metrics(queries, documents)["top1"] == 1.0
    with pytest.raises(ValueError, match="must both be"):
        reciprocal_ranks(np.zeros((2, 3)), np.zeros((3, 3)))


def test_average_ranks_and_spearman() -> None:
    np.testing.assert_allclose(average_ranks([10, 20, 20, 5]), [2.0, 3.5, 3.5, 1.0])
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # d = rank differences (0, 1, -1, 0): rho = 1 - 6 * 2 / (4 * 15) = 0.8.
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # With ties: ranks x (1, 2.5, 2.5, 4), y (1, 2, 3, 4): Pearson of ranks.
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


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


def test_results_table() -> None:
    table = results_table([("base", {"pairs": 3, "top1": 0.5, "mrr": 0.75}), ("new", {})])
    assert table.splitlines() == [
        "| model | pairs | top-1 | MRR |",
        "|---|---:|---:|---:|",
        "| base | 3 | 0.5000 | 0.7500 |",
        "| new | - | - | - |",
    ]


def test_cli_scores_models_on_a_dataset_and_sts(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.encoders.test_train import make_rows, write_dataset

    url = write_dataset(tmp_path / "ds", make_rows(40))
    status = main(
        [
            *(str(tiny_model_dir), "--base", str(tiny_model_dir)),
            *("--dataset", url, "--split", "all"),
            *("--sts", str(DATA / "sts_tiny.tsv"), "--json", str(tmp_path / "r.json")),
        ]
    )
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| model | pairs | top-1 | MRR | STS Spearman |"
    assert lines[2].startswith(f"| {tiny_model_dir} (base) | 40 |")
    assert lines[3].startswith(f"| {tiny_model_dir} | 40 |")
    import json

    results = json.loads((tmp_path / "r.json").read_text())
    assert results[0]["top1"] == results[1]["top1"]  # the same model twice
    assert -1.0 <= results[0]["sts_spearman"] <= 1.0


def test_cli_refuses_a_dataset_without_manifest(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.encoders.test_train import make_rows, write_dataset

    url = write_dataset(tmp_path / "ds", make_rows(4), with_manifest=False)
    assert main([str(tiny_model_dir), "--dataset", url]) == 2
    assert "manifest.json" in capsys.readouterr().err
