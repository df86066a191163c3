"""Verdict: what the prefilter makes of a pair, and the parts many verdicts share.

Both of ``PairJudge``'s paths build verdicts of these parts
(``stages.filter.rules.pair_judge``'s pair by pair, ``stages.filter.rules.pair_columns``'s
over a batch's columns): the figures' names are made once per distinct name,
and one tuple of figures stands for all the equal ones (``dropped``'s
``shared``), so that the two paths' verdicts are the same objects' equals.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from paramine.pipelines.stages.filter.rules.line_checks import (
    DROP,
    RATIO,
    Pending,
    figure,
    length_band,
    ratio_bin,
)


class Verdict(NamedTuple):
    """What the prefilter makes of a pair.

    Attributes:
        reason: Its drop reason; "" where it is kept or pending.
        sides: For a drop, the side keys (``stages.filter.rules.line_checks.side_key``)
            whose lines it drops: the failing line's side for a per-line
            check, both for a rule on the pair.
        kept: A pair not dropped: its normalized pivot and candidate and
            the pivot's language part (the key of the duplicate search but
            for its language).
        pending: A pair whose fate waits for the run's side decisions.
        notes: The checks that could not judge its lines (``<check>_unchecked.<language>``).
        figures: What the pair adds to its sides' figures, once per
            occurrence; a dropped pair's ``drop`` figures among them.
    """

    reason: str = ""
    sides: tuple[str, ...] = ()
    kept: tuple[str, str, str] | None = None
    pending: Pending | None = None
    notes: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()


#: Parts of verdicts shared (``PairJudge.shared``) before they are forgotten.
SHARED_SIZE = 1 << 16

#: A figure's name, made once per distinct name (``pair_judge.Side``).
side_figure = functools.lru_cache(maxsize=4096)(figure)


@functools.lru_cache(maxsize=1 << 14)
def ratio_figure(key: str, pivot_lang: str, pivot_words: float, words: float) -> str:
    """A candidate side's length-ratio figure of a pair, made once per pair of lengths."""
    ratio = (words + 1) / (pivot_words + 1)
    return figure(key, RATIO, f"{pivot_lang}/{ratio_bin(ratio)}")


@functools.lru_cache(maxsize=64)
def fixed_band(max_length_ratio: float) -> tuple[float, float]:
    """The length ratios a pair passes whatever its side's typical ratio (``length_band``)."""
    return length_band(1.0, max_length_ratio)


def dropped(reason: str, sides: tuple[str, ...], figures: tuple[str, ...], shared: dict) -> Verdict:
    """A drop's verdict: its figures with the lines it drops, per side."""
    figures += tuple(side_figure(s, DROP, reason) for s in sides)
    return Verdict(reason, sides, figures=shared.setdefault(figures, figures))
