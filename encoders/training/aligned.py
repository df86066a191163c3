"""Every aligned line a mining pass read, as training rows: the held-out split and the null's cut.

A mining pass writes only the pairs of pivots with two or more candidates
that passed its cut; a language the base hardly knows gets few of those
(Toki Pona's first pass wrote 29 pairs from 4,990 lines). Every line of
the input is aligned data, though: a pivot the base knows beside a line of
the language, which is what multilingual knowledge distillation learns from
(Reimers and Gurevych 2020; LASER3, Heffernan et al. 2022). A pass mined
with ``--write-scored`` keeps each line the Prefilter kept, with the pass's
score, in its ``scored/`` table; this module makes training rows of them:

- a line of a held-out pivot (the trainer's split, by pivot hash) never
  reaches training;
- each (pivot, candidate) once;
- a line the pass scored as a mismatch looks is dropped: below the score that
  ``max_false_accept`` of the run's mismatched pairs reach (the null of the
  pass's own calibration: its candidates paired with other lines' pivots),
  so that a misaligned line of the dump does not teach a wrong meaning.

This module imports neither torch nor sentence-transformers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from paramine.encoders.evaluation.holdout import eval_mask
from paramine.schemas.cut_record import CutRecord

log = logging.getLogger(__name__)

#: The dataset's columns an aligned training row keeps.
COLUMNS = ("pivot", "candidate", "pivot_lang", "score")


@dataclass
class AlignedLines:
    """The aligned lines a run trains on, and how they were chosen.

    Attributes:
        train: One row per distinct (pivot, candidate) of the training split
            that passed the null's cut: ``COLUMNS``.
        held_out: The lines of held-out pivots (never trained on), each pair once.
        counts: Lines read, held out, repeated, dropped as mismatched, kept;
            the cut and the false-accept share it was set at.
    """

    train: pd.DataFrame
    held_out: pd.DataFrame
    counts: dict[str, Any] = field(default_factory=dict)


def cut_at_false_accept(threshold: CutRecord, share: float) -> float | None:
    """The score that ``share`` of the run's mismatched pairs reach; None if the run has no null.

    Read from the calibration's percentiles of the mismatched scores
    (``mismatched_percentiles``, 0 to 100); a manifest written before they
    were recorded gives its seven quantiles (``mismatched``: q02 ... q98),
    between which the cut is interpolated.
    """
    if share >= 1.0:
        return None
    percentiles = threshold.mismatched_percentiles
    if percentiles:
        levels = np.linspace(0.0, 1.0, len(percentiles))
        return float(np.interp(1.0 - share, levels, percentiles))
    summary = threshold.null
    points = [
        (q, summary[f"q{q:02d}"]) for q in (2, 5, 25, 50, 75, 95, 98) if f"q{q:02d}" in summary
    ]
    if not points:
        return None
    levels = np.asarray([q / 100 for q, _ in points])
    return float(np.interp(1.0 - share, levels, [value for _, value in points]))


def aligned_lines(
    scored: pd.DataFrame,
    threshold: CutRecord,
    eval_share: float,
    max_false_accept: float,
) -> AlignedLines:
    """The training split's aligned lines that do not look mismatched, and the held-out ones.

    Args:
        scored: A pass's ``scored/`` table (``paramine.schemas.dataset.SCORED_SCHEMA``).
        threshold: The pass's cut (``Manifest.cut``).
        eval_share: Share of pivots held out, by the trainer's pivot hash.
        max_false_accept: Drop a line whose score is below what this share of
            the mismatched pairs reach; 1 keeps every line.

    A pass mined with a fixed ``--threshold`` recorded no null: every line
    is kept then, with a warning, and ``counts["cut"]`` is None.
    """
    frame = scored.loc[:, list(COLUMNS)]
    held = eval_mask(frame["pivot"], eval_share)
    held_out = frame[held].drop_duplicates(["pivot", "candidate"])
    train = frame[~held]
    distinct = train.drop_duplicates(["pivot", "candidate"])
    cut = cut_at_false_accept(threshold, max_false_accept)
    if cut is None and max_false_accept < 1.0:
        log.warning(
            "the dataset's pass recorded no null distribution of mismatched scores (mined with "
            "a fixed --threshold?): every aligned line is trained on, a misaligned one too; "
            "mine with --threshold auto to leave out lines that score as mismatched pairs do"
        )
    kept = distinct if cut is None else distinct[distinct["score"] >= cut]
    counts = {
        "lines_read": len(frame),
        "held_out_lines": int(held.sum()),
        "repeated": len(train) - len(distinct),
        "dropped_mismatched": len(distinct) - len(kept),
        "train_lines": len(kept),
        "max_false_accept": max_false_accept,
        "cut": None if cut is None else round(cut, 6),
        "score": threshold.score,
    }
    return AlignedLines(kept.reset_index(drop=True), held_out.reset_index(drop=True), counts)
