"""The pairs a training run reads: the held-out split, the overlap with what it is
evaluated on, and the training filters (``--min-score``, ``--max-score``,
``--drop-near-identical``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
from paramine.encoders.evaluation.eval_files import (
    Bitext,
    StsData,
    read_eval_files,
    retrieval_sets,
)
from paramine.encoders.evaluation.holdout import eval_mask, read_dataset, sample_rows, split_key
from paramine.encoders.evaluation.overlap import EVAL_OVERLAP, eval_keys, overlap_mask
from paramine.encoders.evaluation.suite import (
    Split,
    Suite,
    load_suite,
    read_suite,
    resolve_data_root,
)
from paramine.encoders.training.aligned import AlignedLines, aligned_lines
from paramine.schemas.text_keys import edit_similarity, hash_fraction

if TYPE_CHECKING:
    from paramine.encoders.training.config import TrainConfig
    from paramine.schemas.manifest import Manifest


def near_identical(a: pd.Series, b: pd.Series, threshold: float) -> pd.Series:
    """Return True where two texts' normalized edit similarity is >= ``threshold``.

    The similarity is the mining PostFilter's: Levenshtein similarity of the
    comparison keys (case, punctuation and spacing ignored).
    """
    similarity = [edit_similarity(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    return pd.Series(similarity, index=a.index, dtype="float64") >= threshold


def filter_pairs(
    df: pd.DataFrame,
    min_score: float | None = None,
    max_score: float | None = None,
    near_identical_threshold: float | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Apply the training filters; return the kept rows and drops by reason.

    Args:
        df: Pairs in ``PAIRS_SCHEMA`` columns.
        min_score: Drop pairs whose ``min(score_a, score_b)`` is below this.
        max_score: Drop pairs whose ``min(score_a, score_b)`` is above this.
        near_identical_threshold: Drop pairs at least this similar by edit distance.
    """
    dropped: dict[str, int] = {}
    # A pair is as good as its weaker alignment to the pivot.
    score = df[["score_a", "score_b"]].min(axis=1)
    if min_score is not None:
        drop = score < min_score
        dropped["below_min_score"] = int(drop.sum())
        df, score = df[~drop], score[~drop]
    if max_score is not None:
        drop = score > max_score
        dropped["above_max_score"] = int(drop.sum())
        df = df[~drop]
    if near_identical_threshold is not None:
        drop = near_identical(df["sentence_a"], df["sentence_b"], near_identical_threshold)
        dropped["near_identical"] = int(drop.sum())
        df = df[~drop]
    return df, dropped


@dataclass
class EvalData:
    """What a training run is evaluated on besides its held-out pairs."""

    bitexts: list[Bitext] = field(default_factory=list)
    sts: list[tuple[str, StsData]] = field(default_factory=list)
    suite: Suite | None = None
    suite_root: str = ""
    #: The suite's splits by task name, then split name, as read.
    suite_data: dict[str, dict[str, Split]] = field(default_factory=dict)
    #: ``--exclude-sentences`` and ``--exclude-suite``: normalized sentences no
    #: training row may hold, whatever ``--keep-eval-overlap`` says.
    excluded: frozenset[str] = frozenset()

    @property
    def suite_splits(self) -> list[Split]:
        """Every split of the suite, for the overlap filter."""
        return [split for splits in self.suite_data.values() for split in splits.values()]


def read_evaluation(config: TrainConfig) -> EvalData:
    """Read the files of ``--eval-bitext``, ``--eval-held-out``, ``--eval-sts`` and ``--suite``."""
    from paramine.encoders.evaluation.exclusion import excluded_keys

    bitexts, sts = read_eval_files(config, config.eval_share)
    excluded = excluded_keys(config.exclude_sentences, config.exclude_suite, config.suite_data)
    data = EvalData(bitexts, sts, excluded=excluded)
    if config.suite:
        data.suite = load_suite(config.suite)
        data.suite_root = resolve_data_root(data.suite, config.suite_data)
        data.suite_data = read_suite(data.suite, data.suite_root)
    return data


@dataclass
class TrainData:
    """The rows a training run uses, and how they were chosen.

    Attributes:
        train: The training split's pairs, filtered.
        eval: The held-out pairs that paraphrase retrieval scores.
        manifest: The dataset's manifest.
        counts: Rows read, held out and dropped, by reason.
        aligned: With ``--aligned-rows all``: every aligned line of the
            training split the run trains on (``aligned.COLUMNS``); None otherwise.
    """

    train: pd.DataFrame
    eval: pd.DataFrame
    manifest: Manifest
    counts: dict[str, Any] = field(default_factory=dict)
    aligned: pd.DataFrame | None = None


#: The evaluation sets made of the dataset's held-out aligned lines (``--aligned-rows all``).
HELD_OUT_LINES = "held-out lines"
HELD_OUT_LINE_PARAPHRASES = "held-out line paraphrases"


def _aligned_lines(
    config: TrainConfig, manifest: Manifest, evaluation: EvalData
) -> AlignedLines | None:
    """Every aligned line of the dataset, with ``--aligned-rows all``; its held-out ones evaluated.

    The lines of held-out pivots become two retrieval sets (pivot against
    candidate, and two candidates of one pivot), added to ``evaluation``:
    what ``paramine adapt``'s stop rule reads, scored on lines no round
    trained on.
    """
    if config.aligned_rows != "all" or config.train_on == "paraphrases":
        return None
    from paramine.schemas.reader import read_scored

    scored, _ = read_scored(config.dataset)
    lines = aligned_lines(
        scored.to_pandas(),
        manifest.cut,
        config.eval_share,
        config.aligned_max_false_accept,
        config.aligned_max_true_loss,
    )
    held = list(zip(lines.held_out["pivot"], lines.held_out["candidate"], strict=True))
    # Pivots in hash order, so a capped set is a fixed sample, not the first shards'.
    held.sort(key=lambda line: (hash_fraction(split_key(line[0])), line))
    sets = retrieval_sets(held, HELD_OUT_LINES, HELD_OUT_LINE_PARAPHRASES)
    cap = config.eval_max_pairs or None
    evaluation.bitexts += [Bitext(b.name, b.source[:cap], b.target[:cap]) for b in sets]
    return lines


def prepare_data(config: TrainConfig, evaluation: EvalData | None = None) -> TrainData:
    """Read the dataset, split it by pivot, filter the training side.

    Unless ``--keep-eval-overlap``, a training pair (and aligned line) that
    shares a sentence with the held-out pairs or with ``evaluation`` is
    dropped first (:mod:`paramine.encoders.evaluation.overlap`); one that
    holds an ``--exclude-sentences`` or ``--exclude-suite`` sentence always.
    """
    df, manifest = read_dataset(config.dataset)
    evaluation = evaluation or EvalData()
    lines = _aligned_lines(config, manifest, evaluation)
    held_out = eval_mask(df["pivot_sentence"], config.eval_share)
    eval_df = sample_rows(df[held_out], config.eval_max_pairs)
    train_df = df[~held_out]
    dropped: dict[str, int] = {}
    keys: set[str] = set(evaluation.excluded)
    aligned = None if lines is None else lines.train
    if not config.keep_eval_overlap:
        keys |= eval_keys(
            df[held_out],
            evaluation.bitexts,
            [data for _, data in evaluation.sts],
            evaluation.suite_splits,
        )
    if keys or not config.keep_eval_overlap:
        overlap = overlap_mask(train_df, keys)
        dropped[EVAL_OVERLAP] = int(overlap.sum())
        train_df = train_df[~overlap]
        if lines is not None and aligned is not None:
            overlap = overlap_mask(aligned, keys, ("pivot", "candidate"))
            lines.counts[EVAL_OVERLAP] = int(overlap.sum())
            aligned = aligned[~overlap].reset_index(drop=True)
    train_df, filtered = filter_pairs(
        train_df, config.min_score, config.max_score, config.drop_near_identical
    )
    dropped.update(filtered)
    counts = {
        "rows_read": len(df),
        "eval_pivots_rows": int(held_out.sum()),
        "eval_rows_scored": len(eval_df),
        "eval_sentences": len(keys),
        "train_rows_before_filters": int((~held_out).sum()),
        "train_dropped": dropped,
        "train_rows": len(train_df),
    }
    if lines is not None and aligned is not None:
        counts["aligned"] = {**lines.counts, "train_lines": len(aligned)}
    return TrainData(
        train_df.reset_index(drop=True), eval_df.reset_index(drop=True), manifest, counts, aligned
    )
