"""The cuts between candidates of one group, shared by the stages that apply them.

- Group support (``CalibrateThreshold`` records it, ``CoherenceFilter``
  applies it): a pair that scores between a floor and the cut stays when its
  candidate is close to a group-mate that passed the cut.
- Group coherence (``CoherenceFilter``, ``HardNegativeCut``): the cosine
  between candidates of one group that unrelated candidates rarely reach,
  and the same cut calibrated on look-alike candidates of other pivots.

Both come from the run's own null (shifted candidates of the calibration
sample, or each candidate's nearest one of another pivot), so they mean the
same for every model. Nothing here builds a pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from paramine.encoders.neighbours import nearest
from paramine.pipelines.core.text import comparison_key
from paramine.schemas.cut_record import (
    CoherenceRecord,
    CutRecord,
    HardNegativeRecord,
    SupportRecord,
)
from paramine.schemas.errors import UsageError
from paramine.schemas.options import option, parse_fields, parse_share_or_off
from paramine.schemas.records import ScoredPair


def parse_min_group(value: Any) -> int | None:
    """A group size >= 3, or 'off'."""
    if value is None or str(value).strip().lower() == "off":
        return None
    number = int(value)
    if number < 3:
        raise ValueError(f"{number} is below 3 (in a group of two no candidate is the outlier)")
    return number


@dataclass(frozen=True)
class CoherenceOptions:
    """The group checks' settings: CoherenceFilter's, HardNegativeCut's and group support's.

    Each check is off where its value is None. They need a calibrated cut
    (``--threshold auto``) but the hard-negative check.

    Attributes:
        max_false_accept: The run's ``--max-false-accept``: the coherence cut
            is calibrated with it, group support's looser cut is above it.
        min_group: Groups of this many distinct candidates or more drop a
            candidate no closer to any other than unrelated candidates are
            (``--coherence-min-group``).
        group_support: The share of mismatched pairs a looser cut lets
            through, for pairs with a close group-mate (``--group-support``).
        hard_negative_accept: The share of the run's hard negatives a
            candidate must be closer than to some group-mate
            (``--hard-negative-accept``).
    """

    max_false_accept: float
    min_group: int | None = option(
        3,
        "with --threshold auto: in groups of this many distinct candidates or more, drop a "
        "candidate no closer to any other than unrelated candidates are (cut calibrated "
        "with --max-false-accept); 'off' skips the check (default: %(default)s)",
        group=None,
        parse=parse_min_group,
        flag="--coherence-min-group",
    )
    group_support: float | None = option(
        0.1,
        "with --threshold auto: a pair below the cut but above a looser cut, one that lets "
        "this share of mismatched pairs through, stays when its candidate is as close to a "
        "group-mate that passed the cut as only a tenth of --max-false-accept of unrelated "
        "candidates are (docs/thresholds.md); 'off' cuts at the cut alone (default: "
        "%(default)s)",
        group=None,
        parse=parse_share_or_off,
    )
    hard_negative_accept: float | None = option(
        None,
        "in groups of two or more, drop a candidate no closer to any other than this share "
        "of the run's hard negatives (a candidate and its nearest candidate of another "
        "pivot) are: more precision under plausible misalignments, at a cost in recall "
        "(docs/thresholds.md); 'off' skips the check (default: off)",
        group=None,
        parse=parse_share_or_off,
    )

    def __post_init__(self) -> None:
        parse_fields(self)
        if self.group_support is not None and self.group_support <= self.max_false_accept:
            raise UsageError(
                f"--group-support {self.group_support} must be above --max-false-accept "
                f"{self.max_false_accept}: it is the share the looser cut lets through"
            )

    def needs_vectors(self, calibrated: bool) -> bool:
        """Whether a check compares the candidates of a group (by their vectors)."""
        by_cut = calibrated and (self.min_group is not None or self.group_support is not None)
        return by_cut or self.hard_negative_accept is not None


#: Group support's cosine cut lets through this share of --max-false-accept
#: of unrelated candidate pairs: a pair below the cut needs both a score
#: above the floor and a group-mate this close.
SUPPORT_SHARE = 0.1
#: Shifted alignments of the sample's candidates that make the null.
SHIFTS = 100
#: Candidates (the lowest hashes of their comparison keys) that calibrate the
#: hard-negative cut: the search is over them, on one worker.
HARD_NEGATIVE_SAMPLE = 20_000
#: Neighbours fetched per candidate to find its nearest one of another pivot.
HARD_NEGATIVE_K = 16
#: Fewer hard negatives than this: no cut, the check is skipped (and recorded so).
MIN_HARD_NEGATIVES = 50


def support_record(
    mismatched: Sequence[float],
    sample: Sequence[ScoredPair],
    floor_false_accept: float,
    max_false_accept: float,
) -> SupportRecord:
    """The cuts of group support: the score floor and the group-mate cosine.

    A pair that scores between ``floor`` and the cut stays when its candidate
    is at least ``value`` in cosine to a candidate of its group that passed
    the cut (``CoherenceFilter``). ``floor`` lets ``floor_false_accept`` of
    the mismatched pairs through; ``value`` is the cosine that only
    ``SUPPORT_SHARE * max_false_accept`` of unrelated candidates reach (the
    shifted candidates of the sample, as for the coherence cut). Both come
    from the run's own null, so they mean the same for every model.

    Returns:
        ``floor``, ``floor_false_accept``, ``value`` (``None`` when the sample
        has too few candidates: no pair below the cut then stays),
        ``false_accept`` and ``null_pairs``.
    """
    floor = float(np.quantile(np.asarray(mismatched), 1.0 - floor_false_accept, method="higher"))
    share = SUPPORT_SHARE * max_false_accept
    cosine = coherence_cut(sample, share)
    return SupportRecord(
        value=cosine.value,
        floor=round(floor, 6),
        floor_false_accept=floor_false_accept,
        false_accept=share,
        null_pairs=cosine.null_pairs,
    )


def support_floor(threshold: CutRecord) -> float:
    """The score a pair needs to go on after the threshold: the floor, or else the cut."""
    support = threshold.support
    if support is not None and support.value is not None and support.floor is not None:
        return support.floor
    if threshold.value is None:
        raise ValueError("group support needs a calibrated cut; this run has none")
    return float(threshold.value)


def coherence_cut(sample: Sequence[ScoredPair], max_false_accept: float) -> CoherenceRecord:
    """The cosine that only ``max_false_accept`` of unrelated candidate pairs reach.

    Args:
        sample: The calibration sample with its vectors (``EmbedSample``).
        max_false_accept: Share of unrelated pairs allowed at or above the cut.

    Returns:
        The cut (``value``) and the ``null_pairs`` it was taken from; value
        ``None`` when the sample has fewer than two distinct candidates (the
        check is then skipped).
    """
    vectors: dict[str, np.ndarray] = {}
    for scored in sample:
        key = comparison_key(scored.pair.candidate)
        if scored.candidate_vector is not None and key not in vectors:
            vectors[key] = np.asarray(scored.candidate_vector, dtype="float32")
    if len(vectors) < 2:
        return CoherenceRecord(value=None, null_pairs=0)
    matrix = np.stack(list(vectors.values()))  # (candidates, dim)
    n = len(matrix)
    null = np.concatenate(
        [
            np.einsum("ij,ij->i", matrix, np.roll(matrix, shift, axis=0))
            for shift in range(1, min(SHIFTS, n - 1) + 1)
        ]
    )  # (candidates * shifts,)
    return CoherenceRecord(
        value=round(float(np.quantile(null, 1.0 - max_false_accept)), 6), null_pairs=len(null)
    )


def hard_negative_cut(
    members: Iterable[tuple[str, Any, Any]], max_accept: float
) -> HardNegativeRecord:
    """The cosine that only ``max_accept`` of the run's hard negatives reach.

    Args:
        members: ``(candidate key, group key, vector)`` of kept candidates; a
            candidate of several pivots comes once per pivot.
        max_accept: Share of hard negatives allowed at or above the cut.

    Returns:
        The cut (``value``), the ``hard_negatives`` found and ``accept``; value
        ``None`` when fewer than ``MIN_HARD_NEGATIVES`` were found.
    """
    pivots: dict[str, set[Any]] = {}
    vectors: dict[str, Any] = {}
    for candidate, pivot, vector in members:
        pivots.setdefault(candidate, set()).add(pivot)
        vectors.setdefault(candidate, vector)
    keys = sorted(vectors)  # the same pool, in the same order, on any runner
    if len(keys) < 2:
        return HardNegativeRecord(value=None, hard_negatives=0, accept=max_accept)
    pool = np.stack([np.asarray(vectors[k], dtype="float32") for k in keys])  # (n, dim)
    scores, ids = nearest(pool, pool, min(HARD_NEGATIVE_K, len(keys)))
    negatives = []
    for row, key in enumerate(keys):
        for score, other in zip(scores[row], ids[row], strict=True):
            # The nearest candidate that shares no pivot with this one.
            if other >= 0 and other != row and not pivots[keys[other]] & pivots[key]:
                negatives.append(float(score))
                break
    cut = None
    if len(negatives) >= MIN_HARD_NEGATIVES:
        cut = round(float(np.quantile(np.asarray(negatives), 1.0 - max_accept, method="higher")), 6)
    return HardNegativeRecord(value=cut, hard_negatives=len(negatives), accept=max_accept)


def supported(vector: Any, mates: Sequence[Any], support: float | None) -> bool:
    """Whether a candidate below the cut has a mate at least ``support`` close."""
    if support is None or not mates:
        return False
    return bool(max(float(np.dot(vector, mate)) for mate in mates) >= support)


def closest_other(vectors: np.ndarray) -> np.ndarray:
    """Each row's largest cosine to another row (``-inf`` for a lone row)."""
    similarities = vectors @ vectors.T  # (candidates, candidates)
    np.fill_diagonal(similarities, -np.inf)
    result: np.ndarray = similarities.max(axis=1)
    return result
