"""Two encoders compared line by line on one bitext: the gain, and how far noise could make it.

Bitext retrieval accuracy (``TranslationEvaluator``'s) is a mean over lines
of "is this line's translation the nearest of all". Two encoders scored on
the *same* lines differ by the mean of a per-line difference, so the
difference has a standard error of its own (a paired comparison), much
smaller than either accuracy's when most lines are found by both or by
neither. On a hundred held-out lines one line is a point of accuracy: the
standard error says whether a gain of a point is a better encoder or a
line that fell the other way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from paramine.encoders.models.resolve import prompt_applied

if TYPE_CHECKING:
    from paramine.encoders.evaluation.eval_files import Bitext
    from sentence_transformers import SentenceTransformer


@dataclass(frozen=True)
class PairedGain:
    """What one encoder gained over another on the same lines, in points of accuracy.

    Attributes:
        lines: Lines both were scored on.
        gain: The later encoder's accuracy minus the earlier's (mean of both
            directions), in points.
        standard_error: The standard error of that difference over lines, in
            points: the sample standard deviation of the per-line difference
            over the square root of ``lines``.
        changed: Lines where the two differ in either direction.
    """

    lines: int
    gain: float
    standard_error: float
    changed: int

    def to_record(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {
            "lines": self.lines,
            "gain": round(self.gain, 4),
            "standard_error": round(self.standard_error, 4),
            "changed": self.changed,
        }


def line_hits(
    model: SentenceTransformer, bitext: Bitext, prefix: str = "", batch_size: int = 64
) -> np.ndarray:
    """Per line of ``bitext``: 1 where its translation is the nearest of all, both ways' mean.

    The same decision as ``TranslationEvaluator`` (cosine, ``argmax`` over
    the other side), so the mean of the returned array is the mean of its
    ``src2trg`` and ``trg2src`` accuracies; each entry is 0, 0.5 or 1.
    """
    with prompt_applied(model, prefix):
        source = model.encode(bitext.source, batch_size=batch_size, convert_to_numpy=True)
        target = model.encode(bitext.target, batch_size=batch_size, convert_to_numpy=True)
    source = source / np.maximum(np.linalg.norm(source, axis=1, keepdims=True), 1e-12)
    target = target / np.maximum(np.linalg.norm(target, axis=1, keepdims=True), 1e-12)
    similarity = source @ target.T
    lines = np.arange(len(similarity))
    forward = similarity.argmax(axis=1) == lines
    backward = similarity.argmax(axis=0) == lines
    return (forward.astype(np.float64) + backward.astype(np.float64)) / 2


def paired_gain(before: np.ndarray, after: np.ndarray) -> PairedGain:
    """``after``'s gain over ``before`` (:func:`line_hits` of each), with its standard error.

    Raises:
        ValueError: The two were not scored on the same number of lines.
    """
    if before.shape != after.shape:
        raise ValueError(f"{before.shape[0]} and {after.shape[0]} lines: not the same lines")
    lines = int(before.shape[0])
    if lines == 0:
        return PairedGain(0, 0.0, 0.0, 0)
    difference = 100.0 * (after - before)
    spread = float(difference.std(ddof=1)) if lines > 1 else 0.0
    return PairedGain(
        lines=lines,
        gain=float(difference.mean()),
        standard_error=spread / math.sqrt(lines),
        changed=int(np.count_nonzero(difference)),
    )
