"""SentEval-style probes over frozen sentence vectors, with scikit-learn's logistic regression.

Each probe is a single-layer classifier (scikit-learn ``LogisticRegression``,
multinomial, L-BFGS) trained on the train split; its inverse regularization
``C`` is the value of :data:`C_GRID` that scores best on the dev split (ties
go to the stronger regularization; the grid is walked as a warm-started
regularization path), and the figure is that fitted model's
score on the test split, x100, as the paper reports it.

- ``classify`` / ``pair_classify``: accuracy. Pairs are represented by the
  usual features ``(u, v, |u-v|, u*v)`` (:func:`pair_features`).
- ``relatedness``: SentEval's way for SICK-R. A gold score ``y`` becomes a
  distribution over the integer scores around it (``y = 3.6``: 0.6 on 4, 0.4
  on 3); the classifier is fitted to that distribution (each pair appears
  once per neighbouring score, weighted by its share, which is the same loss
  as cross-entropy with the soft target), and predicts the expected score
  ``sum_k k * p(k)``. ``C`` is chosen by Spearman on dev; the figure is
  Spearman on test, x100.

Features are standardized with statistics of the train split alone, so one
``C`` grid serves models whose vectors have any scale. Everything is
deterministic: L-BFGS has no randomness, and ``random_state`` is fixed anyway.
"""

from __future__ import annotations

import copy
import logging
import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

#: The inverse regularization strengths tried on dev, strongest first.
C_GRID = (1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)
SEED = 0
#: L-BFGS iterations per fit; the weakest regularization may stop at this cap
#: on wide pair features, which is itself a regularization that dev judges.
MAX_ITER = 500


@dataclass(frozen=True)
class ProbeResult:
    """What one probe scored.

    Attributes:
        test: Accuracy, or Spearman, on test x100.
        dev: The same on dev x100, for the chosen ``c``.
        c: The chosen inverse regularization strength.
        sizes: Rows of train, dev and test.
    """

    test: float
    dev: float
    c: float
    sizes: tuple[int, int, int]


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(u, v, |u-v|, u*v)`` per pair: ``(pairs, dim)`` twice -> ``(pairs, 4*dim)``."""
    import numpy as np

    return np.hstack([u, v, np.abs(u - v), u * v])


def _standardize(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train)
    return [scaler.transform(x) for x in (train, *others)]


def _path(
    x: np.ndarray,
    y: Sequence[Any] | np.ndarray,
    grid: Sequence[float],
    weights: np.ndarray | None = None,
) -> Iterator[tuple[float, Any]]:
    """Fit along the grid, strongest regularization first; yield ``(C, fitted model)``.

    Each fit starts from the previous solution (warm start), as scikit-learn's
    own ``LogisticRegressionCV`` walks its regularization path: on e5-small's
    vectors of the pl suite it cut the probes' time 2-3x and moved two of the
    eight figures by 0.02 and 0.04. Each yielded model is a copy, which the
    next fit leaves alone.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=MAX_ITER, warm_start=True, random_state=SEED)
    for c in sorted(grid):
        model.set_params(C=c)
        with warnings.catch_warnings():
            # Said once per fit in the log below, not as a warning.
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x, y, sample_weight=weights)
        if int(max(model.n_iter_)) >= MAX_ITER:
            log.info("  C=%g stopped at the %d-iteration cap of L-BFGS", c, MAX_ITER)
        yield c, copy.deepcopy(model)


def _pick(scores: list[tuple[float, float, Any]]) -> tuple[float, float, Any]:
    """The best dev score; on a tie the first (strongest regularization)."""
    best = scores[0]
    for entry in scores[1:]:
        if entry[0] > best[0]:
            best = entry
    return best


def classify(
    train: tuple[np.ndarray, Sequence[Any]],
    dev: tuple[np.ndarray, Sequence[Any]],
    test: tuple[np.ndarray, Sequence[Any]],
    grid: Sequence[float] = C_GRID,
) -> ProbeResult:
    """Logistic regression on ``(features, labels)`` splits; accuracy on test x100.

    A test label never seen in train counts as wrong, as it would for any
    classifier trained on train.
    """
    import numpy as np

    (x_train, y_train), (x_dev, y_dev), (x_test, y_test) = train, dev, test
    x_train, x_dev, x_test = _standardize(x_train, x_dev, x_test)
    y_dev_a, y_test_a = np.asarray(y_dev), np.asarray(y_test)
    tried = [
        (float(np.mean(model.predict(x_dev) == y_dev_a)), c, model)
        for c, model in _path(x_train, y_train, grid)
    ]
    dev_score, c, model = _pick(tried)
    accuracy = float(np.mean(model.predict(x_test) == y_test_a))
    return ProbeResult(100 * accuracy, 100 * dev_score, c, (len(y_train), len(y_dev), len(y_test)))


def soft_targets(scores: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spread each score over its two neighbouring integers (SentEval's encoding).

    Returns:
        ``(rows, classes, weights)``: for each output row, the index of the
        input row it repeats, its integer class and its weight; a score that
        is an integer gives one row of weight 1.
    """
    import numpy as np

    rows, classes, weights = [], [], []
    for i, score in enumerate(scores):
        low = math.floor(score)
        share = score - low
        rows.append(i)
        classes.append(low)
        weights.append(1.0 - share)
        if share > 0:
            rows.append(i)
            classes.append(low + 1)
            weights.append(share)
    return np.asarray(rows), np.asarray(classes), np.asarray(weights)


def relatedness(
    train: tuple[np.ndarray, Sequence[float]],
    dev: tuple[np.ndarray, Sequence[float]],
    test: tuple[np.ndarray, Sequence[float]],
    grid: Sequence[float] = C_GRID,
) -> ProbeResult:
    """Predict the score distribution, as SentEval does for SICK-R; Spearman on test x100."""
    (x_train, y_train), (x_dev, y_dev), (x_test, y_test) = train, dev, test
    x_train, x_dev, x_test = _standardize(x_train, x_dev, x_test)
    rows, classes, weights = soft_targets(y_train)
    x_soft = x_train[rows]  # (rows, features): a pair once per neighbouring score
    tried = [
        (_spearman(_expected(model, x_dev), y_dev), c, model)
        for c, model in _path(x_soft, classes, grid, weights)
    ]
    dev_score, c, model = _pick(tried)
    score = _spearman(_expected(model, x_test), y_test)
    return ProbeResult(100 * score, 100 * dev_score, c, (len(y_train), len(y_dev), len(y_test)))


def _expected(model: Any, x: np.ndarray) -> np.ndarray:
    return model.predict_proba(x) @ model.classes_.astype("float64")  # (rows,)


def _spearman(predicted: np.ndarray, gold: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    value = float(spearmanr(predicted, gold).statistic)
    # A constant prediction (random vectors, strong regularization) has no rank order.
    return 0.0 if math.isnan(value) else value
