"""What the calibration records for the run report: score histograms and borderline pairs.

Kept free of heavy imports: ``CalibrateThreshold`` calls these inside the
pipeline, and the report reads what they return from the manifest's
``threshold``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from paramine.schemas.records import AlignedPair

#: Bins of the score histograms recorded for the run report.
HISTOGRAM_BINS = 40
#: Sampled pairs recorded on each side of the cut, for the run report.
BORDERLINE_PAIRS = 5


def score_histograms(**scores: Sequence[float]) -> dict[str, Any]:
    """Histograms of score distributions on shared, fixed bins, for the run report.

    Returns:
        ``edges`` (``HISTOGRAM_BINS + 1`` values from the lowest score to the
        highest) and one list of counts per keyword; ``{}`` without scores.
    """
    values = [np.asarray(v, dtype="float64") for v in scores.values() if len(v)]
    if not values:
        return {}
    low = float(min(v.min() for v in values))
    high = float(max(v.max() for v in values))
    edges = np.linspace(low, high if high > low else low + 1e-6, HISTOGRAM_BINS + 1)
    out: dict[str, Any] = {"edges": [round(float(e), 6) for e in edges]}
    for name, v in scores.items():
        out[name] = [int(c) for c in np.histogram(np.asarray(v, dtype="float64"), edges)[0]]
    return out


def borderline(
    sample: Sequence[AlignedPair], scores: Sequence[float], cut: float, n: int = BORDERLINE_PAIRS
) -> dict[str, list[dict[str, Any]]]:
    """The sampled pairs just below and just above the cut, for the run report.

    Pairs below the cut are dropped by ThresholdFilter and never written, so
    the calibration sample is where the report finds them.
    """
    order = sorted(range(len(sample)), key=lambda i: scores[i])

    def row(i: int) -> dict[str, Any]:
        pair = sample[i]
        return {
            "pivot": pair.pivot,
            "candidate": pair.candidate,
            "score": round(float(scores[i]), 6),
            "shard": pair.shard,
            "line": pair.line,
        }

    below = [i for i in order if scores[i] < cut][-n:]
    above = [i for i in order if scores[i] >= cut][:n]
    return {"below": [row(i) for i in below], "above": [row(i) for i in above]}
