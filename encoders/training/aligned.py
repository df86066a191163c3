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
  so that a misaligned line of the dump does not teach a wrong meaning;
- and where the pass tells the language's lines from the null well, the cut
  goes higher, as long as it costs at most ``max_true_loss`` of the true
  lines (``tighter_share``): at the null's median a mismatched line of the
  dump passes one time in two, and a language the base half knows (Tatar:
  its aligned lines' lower quartile is the null's 98th percentile) can
  leave out nine in ten of them for a few of its own lines.

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


#: The false-accept shares ``tighter_share`` tries, loosest first, in steps of this.
SHARE_STEP = 0.01
#: Where more of a pass's lines than this look mismatched (``mismatched_share``),
#: its scores do not tell the language from the null: true lines that score as
#: the null does are counted as mismatched, the cost of a higher cut is
#: unknowable, and the cut stays where ``max_false_accept`` puts it.
MAX_MISMATCHED_SHARE = 0.5


def mismatched_share(scores: np.ndarray, threshold: CutRecord) -> float | None:
    """An upper estimate of the share of ``scores`` that are mismatched lines (Storey's pi0).

    Half of the null lies below its median, so ``m`` mismatched lines put
    about ``m / 2`` there; the true lines that score below it too only make
    the estimate larger. None where the run has no null.
    """
    median = cut_at_false_accept(threshold, 0.5)
    if median is None or not len(scores):
        return None
    return min(1.0, float(np.mean(scores < median)) / 0.5)


def tighter_share(
    scores: np.ndarray, threshold: CutRecord, max_false_accept: float, max_true_loss: float
) -> tuple[float, float | None]:
    """The strictest false-accept share whose cut costs at most ``max_true_loss`` of true lines.

    Raising the cut from ``max_false_accept``'s to share ``s``'s leaves out
    ``K(start) - K(s)`` lines, of which about ``pi * N * (start - s)`` are
    mismatched (``mismatched_share``: a mismatched line passes a cut with
    the null's probability); the rest are true lines. The share goes down in
    steps of ``SHARE_STEP`` while that estimate of true lines lost stays
    within ``max_true_loss`` of the estimated true lines, ``N * (1 - pi)``.
    Where the base barely tells the language from the null (Naga Tangshang,
    Ho) the first steps already cost more and the share moves little; where
    more than ``MAX_MISMATCHED_SHARE`` of the lines look mismatched, it
    stays as it was.

    Returns:
        The share, and the estimate of mismatched lines (None: no null, or
        ``max_true_loss`` 0, and the share is ``max_false_accept``).
    """
    start = cut_at_false_accept(threshold, max_false_accept)
    pi = mismatched_share(scores, threshold)
    if start is None or pi is None or max_true_loss <= 0:
        return max_false_accept, None
    if pi > MAX_MISMATCHED_SHARE:
        return max_false_accept, pi
    n = len(scores)
    kept_at_start = int(np.sum(scores >= start))
    budget = max_true_loss * n * (1.0 - pi)
    chosen = max_false_accept
    for step in range(1, round(max_false_accept / SHARE_STEP)):
        share = round(max_false_accept - step * SHARE_STEP, 6)
        cut = cut_at_false_accept(threshold, share)
        if cut is None:
            break
        left_out = kept_at_start - int(np.sum(scores >= cut))
        true_lost = left_out - pi * n * (max_false_accept - share)
        if true_lost > budget:
            break
        chosen = share
    return chosen, pi


def aligned_lines(
    scored: pd.DataFrame,
    threshold: CutRecord,
    eval_share: float,
    max_false_accept: float,
    max_true_loss: float = 0.0,
) -> AlignedLines:
    """The training split's aligned lines that do not look mismatched, and the held-out ones.

    Args:
        scored: A pass's ``scored/`` table (``paramine.schemas.dataset.SCORED_SCHEMA``).
        threshold: The pass's cut (``Manifest.cut``).
        eval_share: Share of pivots held out, by the trainer's pivot hash.
        max_false_accept: Drop a line whose score is below what this share of
            the mismatched pairs reach; 1 keeps every line.
        max_true_loss: Raise that cut while it costs at most this share of
            the true lines (``tighter_share``); 0 keeps it where it is.

    A pass mined with a fixed ``--threshold`` recorded no null: every line
    is kept then, with a warning, and ``counts["cut"]`` is None.
    """
    frame = scored.loc[:, list(COLUMNS)]
    held = eval_mask(frame["pivot"], eval_share)
    held_out = frame[held].drop_duplicates(["pivot", "candidate"])
    train = frame[~held]
    distinct = train.drop_duplicates(["pivot", "candidate"])
    share, pi = tighter_share(
        distinct["score"].to_numpy(), threshold, max_false_accept, max_true_loss
    )
    cut = cut_at_false_accept(threshold, share)
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
        "max_true_loss": max_true_loss,
        # The share the cut was set at, and the estimate of mismatched lines that chose it.
        "false_accept": share,
        "mismatched_share": None if pi is None else round(pi, 4),
        "cut": None if cut is None else round(cut, 6),
        "score": threshold.score,
    }
    return AlignedLines(kept.reset_index(drop=True), held_out.reset_index(drop=True), counts)
