"""Hard negatives mined with faiss from the dataset itself, never from the anchor's pivot group."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from paramine.encoders.evaluation.suite_eval import model_encoder
from paramine.encoders.modules.lstm_pooling import load_encoder
from paramine.encoders.training.hard_negatives import mine_hard_negatives, training_rows
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.errors import UsageError
from paramine.schemas.text_keys import comparison_key

from tests.encoders.datasets import WORDS, write_dataset


def group_rows(groups: int = 24, seed: int = 0) -> list[dict]:
    """Mined-like rows: three candidates per pivot, paired (c1, c2) and (c2, c3).

    The candidates of a group share their words, so they are one another's
    nearest neighbours: a miner that ignored the group would pick them.
    Group 0's second pair spells its pivot differently (case, punctuation):
    the same group by the comparison key.
    """
    rng = random.Random(seed)
    rows = []
    for g in range(groups):
        words = rng.sample(WORDS, 6)
        c1 = " ".join(words)
        c2 = " ".join([words[1], words[0], *words[2:]])
        c3 = " ".join([*words[:3], words[4], words[3], words[5]])
        for n, (a, b) in enumerate(((c1, c2), (c2, c3))):
            pivot = f"Pivot sentence number {g}."
            if g == 0 and n == 1:
                pivot = "  PIVOT sentence number 0 "
            rows.append(
                {
                    "pair_id": f"p{g:03d}{n}",
                    "sentence_a": a,
                    "sentence_b": b,
                    "lang": "pl",
                    "pivot_sentence": pivot,
                    "pivot_lang": "en",
                    "score_a": 0.9,
                    "score_b": 0.9,
                    "group_size": 3,
                    "corpus": "synthetic",
                }
            )
    return rows


def test_negatives_never_come_from_the_anchors_pivot_group(tiny_model_dir: Path) -> None:
    rows = group_rows()
    anchors = [r["sentence_a"] for r in rows]
    positives = [r["sentence_b"] for r in rows]
    pivots = [r["pivot_sentence"] for r in rows]
    encode = model_encoder(load_encoder(str(tiny_model_dir), device="cpu"), "", 16)
    group_keys: dict[str, set[str]] = {}
    for a, b, pivot in zip(anchors, positives, pivots, strict=True):
        group_keys.setdefault(comparison_key(pivot), set()).update(
            {comparison_key(a), comparison_key(b)}
        )
    assert len(group_keys) == 24  # group 0's two spellings are one group

    # The test has teeth: without the exclusion, an anchor's nearest other
    # sentence is nearly always one of its own group.
    texts = sorted(set(anchors) | set(positives))
    vectors = encode(texts)
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -2)
    nearest = [texts[int(j)] for j in similarity.argmax(axis=1)]
    own = sum(
        comparison_key(nearest[texts.index(a)]) in group_keys[comparison_key(p)]
        for a, p in zip(anchors, pivots, strict=True)
    )
    assert own >= 0.9 * len(anchors)

    mined = mine_hard_negatives(anchors, positives, pivots, encode, count=3, margin=0.0)
    assert mined.stats["rows_with_negatives"] == len(rows)
    for a, b, pivot, negatives in zip(anchors, positives, pivots, mined.negatives, strict=True):
        assert len(negatives) == 3 and len(set(negatives)) == 3
        keys = {comparison_key(n) for n in negatives}
        assert not keys & group_keys[comparison_key(pivot)], (a, negatives)
        assert not keys & {comparison_key(a), comparison_key(b)}
        assert set(negatives) <= set(texts)  # the dataset's own sentences
    # The hardest allowed ones: on average nearer the anchor than a random sentence.
    assert mined.stats["mean_cos_negative"] > float(np.mean(similarity[similarity > -2]))


def test_aligned_rows_get_negatives_from_the_candidates_side(tiny_model_dir: Path) -> None:
    """A pivot's negative is a near miss among the candidates, never another pivot."""
    train = pd.DataFrame(group_rows())
    rows = training_rows(train, "both")
    candidates = set(train["sentence_a"]) | set(train["sentence_b"])
    pivots = set(train["pivot_sentence"])
    encode = model_encoder(load_encoder(str(tiny_model_dir), device="cpu"), "", 16)
    # The test has teeth: among every row's sentences, an aligned row's nearest
    # one outside its group is another pivot (near-identical "Pivot sentence
    # number g.") nearly always.
    texts = sorted(candidates | pivots)
    vectors = encode(texts)
    similarity = vectors @ vectors.T
    aligned = range(len(train), len(rows.anchors))
    nearest_pivot = 0
    for i in aligned:
        anchor, group = rows.anchors[i], comparison_key(rows.pivots[i])
        order = np.argsort(-similarity[texts.index(anchor)])
        outside = [texts[j] for j in order if comparison_key(texts[j]) != group]
        nearest_pivot += outside[0] in pivots and comparison_key(outside[0]) != group
    assert nearest_pivot >= 0.9 * len(aligned)

    mined = mine_hard_negatives(*rows, encode, count=1, margin=0.0, pool=sorted(candidates))
    assert len(rows.anchors) == len(train) + 3 * 24 + 1  # group 0's c2 under both spellings
    assert mined.stats["rows_with_negatives"] >= 0.9 * len(rows.anchors)
    assert mined.stats["texts_searched"] == len(candidates)
    group_of = {
        text: comparison_key(r["pivot_sentence"])
        for r in group_rows()
        for text in (r["sentence_a"], r["sentence_b"])
    }
    for anchor, pivot, negatives in zip(rows.anchors, rows.pivots, mined.negatives, strict=True):
        for negative in negatives:
            assert negative in candidates, (anchor, negatives)
            assert group_of[negative] != comparison_key(pivot), (anchor, negatives)


def test_the_adapt_recipe_trains_with_hard_negatives(tmp_path: Path, tiny_model_dir: Path) -> None:
    rows = group_rows(32)
    url = write_dataset(tmp_path / "ds", rows)
    out = tmp_path / "model"
    args = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
    args += ["--recipe", "adapt", "--lstm-hidden", "16", "--batch-size", "8"]
    args += ["--max-steps", "2", "--eval-share", "0", "--hard-negatives", "1"]
    args += ["--hard-negative-margin", "0", "--aligned-rows", "written"]
    assert cli_main(["train", *args]) == 0
    summary = json.loads((out / "paramine_training.json").read_text())
    stats = summary["counts"]["hard_negatives"]
    assert stats["rows"] == 64 + 3 * 32 + 1  # the paraphrases, then each distinct aligned pair
    assert stats["rows_with_negatives"] + stats["rows_dropped_without_negatives"] == stats["rows"]
    assert summary["training"]["train_pairs"] == stats["rows_with_negatives"]
    assert summary["settings"]["train_on"] == "both"
    # Negatives were searched among the candidates only, not the pivots.
    candidates = {r[side] for r in rows for side in ("sentence_a", "sentence_b")}
    assert stats["texts_searched"] == len(candidates)


def test_the_margin_keeps_negatives_below_the_positive(tiny_model_dir: Path) -> None:
    rows = group_rows()
    anchors = [r["sentence_a"] for r in rows]
    positives = [r["sentence_b"] for r in rows]
    encode = model_encoder(load_encoder(str(tiny_model_dir), device="cpu"), "", 16)
    margin = 0.1
    mined = mine_hard_negatives(
        anchors, positives, [r["pivot_sentence"] for r in rows], encode, 2, margin
    )
    vectors = dict(
        zip(
            sorted(set(anchors) | set(positives)),
            encode(sorted(set(anchors) | set(positives))),
            strict=True,
        )
    )
    for a, b, negatives in zip(anchors, positives, mined.negatives, strict=True):
        positive = float(vectors[a] @ vectors[b])
        for negative in negatives:
            assert float(vectors[a] @ vectors[negative]) <= (1 - margin) * positive + 1e-6
    # A margin no sentence can meet leaves no row with negatives: counted, not faked.
    none = mine_hard_negatives(
        anchors, positives, [r["pivot_sentence"] for r in rows], encode, 2, 0.999
    )
    assert none.stats["rows_with_negatives"] == 0 and all(n == [] for n in none.negatives)


def test_training_with_hard_negatives(tmp_path: Path, tiny_model_dir: Path) -> None:
    url = write_dataset(tmp_path / "ds", group_rows(32))
    out = tmp_path / "model"
    args = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
    args += ["--lstm-hidden", "16", "--batch-size", "8", "--max-steps", "2", "--eval-share", "0"]
    args += ["--hard-negatives", "2", "--hard-negative-margin", "0"]
    assert cli_main(["train", *args]) == 0
    summary = json.loads((out / "paramine_training.json").read_text())
    stats = summary["counts"]["hard_negatives"]
    assert stats["per_row"] == 2 and stats["rows"] == 64
    assert stats["rows_with_negatives"] + stats["rows_dropped_without_negatives"] == 64
    assert summary["training"]["train_pairs"] == stats["rows_with_negatives"]
    assert summary["training"]["global_step"] == 2
    assert summary["settings"]["hard_negatives"] == 2


def test_without_faiss_the_error_says_what_to_install(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # as where faiss is not installed
    rows = group_rows(4)
    with pytest.raises(UsageError, match=r"pip install 'paramine\[faiss\]'"):
        mine_hard_negatives(
            [r["sentence_a"] for r in rows],
            [r["sentence_b"] for r in rows],
            [r["pivot_sentence"] for r in rows],
            model_encoder(load_encoder(str(tiny_model_dir), device="cpu"), "", 16),
            1,
        )
