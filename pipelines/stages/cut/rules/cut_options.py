"""CutOptions: where a run's cut comes from and what it applies to (``--threshold``, ``--score``).

The cut stage's choice, stated once: ``MiningSettings`` declares its two
fields from here, and the graph asks these options (``calibrated``,
``margin``, ``fixed_threshold``) rather than the raw values. The calibration's
own settings are ``cuts.CalibrationOptions``, the margin's
``margin.MarginOptions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paramine.schemas.errors import UsageError
from paramine.schemas.options import option, parse_fields

#: What a cut applies to (``--score``).
SCORES = ("cosine", "margin")


def parse_threshold(value: Any) -> float | str:
    """``"auto"``, or a cosine in [-1, 1] as a float."""
    text = str(value).strip()
    if text == "auto":
        return "auto"
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"{text!r}: give 'auto' or a cosine such as 0.8") from None
    if not -1.0 <= number <= 1.0:
        raise ValueError(f"{number} is not a cosine in [-1, 1]")
    return number


@dataclass(frozen=True)
class CutOptions:
    """Where the cut comes from and what it applies to: ``--threshold`` and ``--score``.

    Attributes:
        threshold: ``"auto"`` (calibrated on the run's data) or a fixed cosine.
        score: ``cosine`` or ``margin``; ``None``: margin when calibrated,
            cosine with a fixed cut (``resolved_score``).
    """

    threshold: float | str = option(
        "auto",
        "keep pairs whose cosine reaches this; 'auto' calibrates the cut for the model on "
        "the data (default: %(default)s)",
        group=None,
        parse=parse_threshold,
    )
    score: str | None = option(
        None,
        "what the cut applies to: cosine, or margin (the cosine over the mean cosine of both "
        "sentences' k nearest neighbours in the calibration sample; needs --threshold auto) "
        "(default: margin with --threshold auto, cosine with a fixed --threshold)",
        group=None,
        choices=SCORES,
    )

    def __post_init__(self) -> None:
        parse_fields(self)
        self.resolved_score()

    def resolved_score(self) -> str:
        """The score the run cuts on: ``score``, or by default margin when calibrated.

        Margin is the default where it can be: on Tatoeba ces-eng and eng-pol
        with 20% noise it kept more true pairs than the cosine at the same or
        higher precision (docs/thresholds.md). A fixed ``--threshold`` is a
        cosine; margins are calibrated only (their scale depends on the data).

        Raises:
            UsageError: margin with a fixed threshold.
        """
        if self.score is None:
            return "margin" if self.calibrated else "cosine"
        if self.score == "margin" and not self.calibrated:
            raise UsageError(
                f"--score margin needs --threshold auto (got --threshold {self.threshold}): a "
                "margin's scale depends on the data, so its cut is calibrated; use --score "
                "cosine for a fixed cosine cut"
            )
        return self.score

    @property
    def calibrated(self) -> bool:
        """Whether the cut is calibrated on the data (``--threshold auto``)."""
        return self.threshold == "auto"

    @property
    def margin(self) -> bool:
        """Whether the cut applies to the margin (only ever calibrated)."""
        return self.calibrated and self.resolved_score() == "margin"

    @property
    def fixed_threshold(self) -> float | None:
        """The fixed cut, or ``None`` where it is calibrated."""
        return None if self.calibrated else float(self.threshold)
