"""Every aligned line of a pass as training rows: the held-out split, repeats, the null's cut."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from paramine.encoders.evaluation.holdout import split_key
from paramine.encoders.training.aligned import (
    MAX_MISMATCHED_SHARE,
    aligned_lines,
    cut_at_false_accept,
    mismatched_share,
    tighter_share,
)
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.data import (
    HELD_OUT_LINES,
    EvalData,
    prepare_data,
    read_evaluation,
)
from paramine.encoders.training.hard_negatives import training_rows
from paramine.schemas.cut_record import CutRecord
from paramine.schemas.errors import DatasetError, InputError
from paramine.schemas.text_keys import hash_fraction

from tests.encoders.datasets import NULL_THRESHOLD, make_rows, write_scored_dataset

NULL_CUT = CutRecord.read(NULL_THRESHOLD)


def test_the_cut_is_the_score_that_share_of_mismatched_pairs_reach() -> None:
    assert cut_at_false_accept(NULL_CUT, 0.5) == pytest.approx(0.5)
    assert cut_at_false_accept(NULL_CUT, 0.25) == pytest.approx(0.75)
    assert cut_at_false_accept(NULL_CUT, 1.0) is None  # every line kept
    # A manifest written before the percentiles: between its seven quantiles.
    older = {"mismatched": {"q02": 0.1, "q05": 0.2, "q25": 0.3, "q50": 0.4, "q75": 0.6}}
    assert cut_at_false_accept(CutRecord.read(older), 0.5) == pytest.approx(0.4)
    assert cut_at_false_accept(CutRecord.read(older), 0.375) == pytest.approx(0.5)
    assert cut_at_false_accept(CutRecord.read({"value": 0.8, "mode": "fixed"}), 0.5) is None


def _mixture(true_low: float, planted: int = 200, true: int = 800) -> np.ndarray:
    """Planted lines scoring as the null of ``NULL_CUT`` does; true ones over ``true_low``."""
    rng = np.random.default_rng(7)
    return np.concatenate([rng.uniform(0.0, 1.0, planted), rng.uniform(true_low, 1.0, true)])


def test_the_mismatched_share_is_read_from_the_lines_under_the_nulls_median() -> None:
    assert mismatched_share(_mixture(0.6), NULL_CUT) == pytest.approx(0.2, abs=0.03)
    # True lines under the median count as mismatched: an upper estimate.
    below = (200 * 0.5 + 800 * 0.3 / 0.8) / 1000  # planted and true lines under 0.5
    assert mismatched_share(_mixture(0.2), NULL_CUT) == pytest.approx(below / 0.5, abs=0.04)
    fixed = CutRecord.read({"value": 0.8, "mode": "fixed"})
    assert mismatched_share(_mixture(0.6), fixed) is None


def test_a_pass_that_tells_the_language_from_the_null_cuts_higher() -> None:
    scores = _mixture(0.9)  # every true line above 0.9, the null's 90th percentile
    share, pi = tighter_share(scores, NULL_CUT, 0.5, 0.02)
    assert pi == pytest.approx(0.2, abs=0.03)
    # Up to the true lines' floor the cut leaves out planted lines only; one step
    # past it costs a tenth of the true lines, over the 2% budget.
    assert share == pytest.approx(0.1)
    cut = cut_at_false_accept(NULL_CUT, share)
    assert cut is not None
    kept = scores >= cut
    assert kept[200:].all() and kept[:200].sum() < 35  # was about 100 at the median
    # A wider budget pays for more: some true lines go, more planted ones.
    assert tighter_share(scores, NULL_CUT, 0.5, 0.15)[0] < share
    # 0 keeps the cut where max_false_accept puts it.
    assert tighter_share(scores, NULL_CUT, 0.5, 0.0) == (0.5, None)


def test_a_pass_that_does_not_tell_them_apart_keeps_the_cut() -> None:
    # True lines scored as the null scores them: half the lines look mismatched or more.
    alike = _mixture(0.0)
    share, pi = tighter_share(alike, NULL_CUT, 0.5, 0.02)
    assert pi is not None and pi > MAX_MISMATCHED_SHARE and share == 0.5
    # Most true lines high, a quarter of them among the null's scores: each step
    # up costs some true lines, and the cut moves a few steps.
    tail = np.concatenate(
        [_mixture(0.9, true=600), np.random.default_rng(8).uniform(0.3, 0.9, 200)]
    )
    share, pi = tighter_share(tail, NULL_CUT, 0.5, 0.02)
    assert pi is not None and pi <= MAX_MISMATCHED_SHARE and 0.4 <= share < 0.5
    fixed = CutRecord.read({"value": 0.8, "mode": "fixed"})
    assert tighter_share(alike, fixed, 0.5, 0.02) == (0.5, None)


def test_the_rows_record_the_share_their_cut_was_set_at() -> None:
    scores = _mixture(0.9)
    frame = pd.DataFrame(
        {
            "pivot": [f"Pivot sentence {i}." for i in range(len(scores))],
            "candidate": [f"zdanie {i}" for i in range(len(scores))],
            "pivot_lang": "en",
            "score": scores,
        }
    )
    plain = aligned_lines(frame, NULL_CUT, 0.0, 0.5)
    higher = aligned_lines(frame, NULL_CUT, 0.0, 0.5, max_true_loss=0.02)
    assert plain.counts["false_accept"] == 0.5 and plain.counts["mismatched_share"] is None
    assert higher.counts["false_accept"] == pytest.approx(0.1)
    assert higher.counts["mismatched_share"] == pytest.approx(0.2, abs=0.03)
    assert higher.counts["cut"] == pytest.approx(0.9)
    true_rows = {f"zdanie {i}" for i in range(200, 1000)}
    assert true_rows <= set(higher.train["candidate"]) and true_rows <= set(
        plain.train["candidate"]
    )
    assert len(higher.train) < len(plain.train) - 50


def _lines(n: int = 400) -> tuple[pd.DataFrame, set[int]]:
    """n lines, every fifth a planted mismatch scoring low; line 7 twice."""
    planted = {i for i in range(n) if i % 5 == 0}
    rows = [
        {
            "pivot": f"Pivot sentence {i}.",
            "candidate": f"zdanie {i}",
            "pivot_lang": "en",
            "score": 0.2 if i in planted else 0.9,
        }
        for i in range(n)
    ]
    rows.append(dict(rows[7]))
    return pd.DataFrame(rows), planted


def test_held_out_repeated_and_mismatched_lines_never_train() -> None:
    frame, planted = _lines()
    lines = aligned_lines(frame, NULL_CUT, eval_share=0.2, max_false_accept=0.5)
    held = {i for i in range(400) if hash_fraction(split_key(f"Pivot sentence {i}.")) < 0.2}
    trained = {int(p.split()[2].rstrip(".")) for p in lines.train["pivot"]}
    assert trained == set(range(400)) - held - planted
    assert set(lines.held_out["pivot"]) == {f"Pivot sentence {i}." for i in held}
    counts = lines.counts
    assert counts["cut"] == pytest.approx(0.5)
    assert counts["repeated"] == (0 if 7 in held else 1)
    assert counts["dropped_mismatched"] == len(planted - held)
    # The books add up: every line read is held out, a repeat, dropped or trained on.
    assert (
        counts["lines_read"]
        == 401
        == (
            counts["held_out_lines"]
            + counts["repeated"]
            + counts["dropped_mismatched"]
            + counts["train_lines"]
        )
    )
    every = aligned_lines(frame, NULL_CUT, eval_share=0.2, max_false_accept=1.0)
    assert every.counts["dropped_mismatched"] == 0 and every.counts["cut"] is None


def test_a_pass_with_a_fixed_threshold_has_no_null_to_cut_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    frame, _ = _lines(20)
    lines = aligned_lines(frame, CutRecord.read({"value": 0.8, "mode": "fixed"}), 0.1, 0.5)
    assert "no null distribution" in caplog.text
    assert lines.counts["cut"] is None and lines.counts["dropped_mismatched"] == 0


def test_a_run_trains_on_every_line_but_planted_and_held_out_ones(tmp_path: Path) -> None:
    frame, planted = _lines()
    lines = list(frame[["pivot", "candidate", "score"]].itertuples(index=False, name=None))
    url = write_scored_dataset(tmp_path / "ds", make_rows(40), lines)
    config = TrainConfig(dataset=url, base="b", output="o", recipe="adapt", eval_share=0.2)
    assert config.aligned_rows == "all"
    evaluation = EvalData()
    data = prepare_data(config, evaluation)
    assert data.aligned is not None
    anchors, positives, _ = training_rows(data.train, "bitext", data.aligned)
    numbers = {int(c.split()[1]) for c in positives}
    held = {i for i in range(400) if hash_fraction(split_key(f"Pivot sentence {i}.")) < 0.2}
    assert numbers == set(range(400)) - planted - held
    assert all(f"Pivot sentence {i}." in anchors for i in numbers)
    # The held-out lines are scored (the loop's stop rule reads them), never trained on.
    [held_set] = [b for b in evaluation.bitexts if b.name == HELD_OUT_LINES]
    assert {split_key(p) for p in held_set.source} <= {
        split_key(f"Pivot sentence {i}.") for i in held
    }
    assert data.counts["aligned"]["train_lines"] == len(data.aligned)
    both = training_rows(data.train, "both", data.aligned)
    assert len(both.anchors) == len(data.train) + len(data.aligned)


def test_all_lines_need_a_scored_table(tmp_path: Path) -> None:
    from tests.encoders.datasets import write_dataset

    url = write_dataset(tmp_path / "ds", make_rows(40))
    config = TrainConfig(dataset=url, base="b", output="o", recipe="adapt")
    with pytest.raises(DatasetError, match="--write-scored"):
        prepare_data(config)
    written = TrainConfig(dataset=url, base="b", output="o", recipe="adapt", aligned_rows="written")
    assert prepare_data(written).aligned is None


def test_excluded_sentences_never_train_whatever_keep_eval_overlap_says(tmp_path: Path) -> None:
    frame, _ = _lines()
    lines = list(frame[["pivot", "candidate", "score"]].itertuples(index=False, name=None))
    rows = make_rows(40)
    url = write_scored_dataset(tmp_path / "ds", rows, lines)
    # Case, spacing and punctuation aside, as the overlap filter compares.
    excluded = tmp_path / "suite.txt"
    excluded.write_text(f"ZDANIE 1\npivot  sentence 2\n{rows[3]['sentence_b'].upper()}!\n")

    def kept(**given: object) -> tuple[set[int], set[str], dict]:
        config = TrainConfig(
            dataset=url, base="b", output="o", recipe="adapt", eval_share=0.2, **given
        )
        data = prepare_data(config, read_evaluation(config))
        assert data.aligned is not None
        numbers = {int(c.split()[1]) for c in data.aligned["candidate"]}
        return numbers, set(data.train["pair_id"]), data.counts

    every, pairs, _ = kept(keep_eval_overlap=True)
    assert {1, 2} <= every and "p0003" in pairs
    for given in ({}, {"keep_eval_overlap": True}):
        numbers, kept_pairs, counts = kept(exclude_sentences=(str(excluded),), **given)
        assert numbers == every - {1, 2}, given
        assert kept_pairs == pairs - {"p0003"}, given
        assert counts["aligned"]["eval_overlap"] == 2
        assert counts["train_dropped"]["eval_overlap"] >= 1
    with pytest.raises(InputError, match=r"--exclude-sentences .*missing\.txt"):
        read_evaluation(
            TrainConfig(
                dataset=url,
                base="b",
                output="o",
                exclude_sentences=(str(tmp_path / "missing.txt"),),
            )
        )
