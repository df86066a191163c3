"""The loop's rule: does a round's encoder replace the best before it, and is another round due?

Read on held-out lines only (``paramine adapt``'s ``--min-gain``,
``--min-gain-se``, ``--tied-round``), never on the pairs the rounds write.
"""

from __future__ import annotations

from typing import NamedTuple

from paramine.pipelines.adapt.settings import AdaptSettings


class Judged(NamedTuple):
    """A round's encoder against the best before it: kept or not, another round or not, why."""

    keep: bool
    go_on: bool
    why: str


def needs_error(gain: float, settings: AdaptSettings, tie_allowed: bool) -> bool:
    """Whether the gain's standard error can change ``judge``'s answer (it costs a comparison).

    It can where the gain alone reaches ``--min-gain`` (the error may take
    it under), and for a tie where the gain alone is a loss (the error may
    make it one within the noise).
    """
    if settings.min_gain_se <= 0:
        return False
    return gain >= settings.min_gain or (tie_allowed and gain < min(0.0, settings.min_gain))


def judge(
    gain: float,
    error: float,
    lines: int,
    settings: AdaptSettings,
    *,
    tie_allowed: bool,
    against: int,
) -> Judged:
    """A round's gain of held-out points (``error``: its standard error on ``lines``, 0 unread).

    It goes on where the gain, less ``--min-gain-se`` standard errors,
    reaches ``--min-gain``: another round may gain again. Short of that it is
    a tie where ``tie_allowed`` (the best before it, round ``against``, is a
    trained round, and ``--tied-round later``) and the gain is no loss
    beyond those standard errors, nor beyond a negative ``--min-gain``: it is
    kept, and the loop stops with its pass. Else the best before it stays.
    """
    wanted, errors = settings.min_gain, settings.min_gain_se
    if error:
        why = f"gained {gain:+.2f} ± {error:.2f} points on {lines:,} held-out lines"
    else:
        why = f"gained {gain:+.2f} points on held-out lines"
    if gain - errors * error >= wanted:
        return Judged(True, True, why)
    if error:
        why += f": {gain - errors * error:+.2f} with {errors:g} standard error off"
    why += f" (< {wanted:g})"
    if tie_allowed and gain + errors * error >= min(0.0, wanted):
        return Judged(True, False, why + f", a tie with round {against}: the later kept")
    return Judged(False, False, why)
