"""CutOptions: the cut calibrated or fixed, on the cosine or the margin, checked when made."""

from __future__ import annotations

import pytest
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.cut.rules.cut_options import CutOptions
from paramine.schemas.errors import UsageError


def test_the_default_is_a_calibrated_margin() -> None:
    cut = CutOptions()
    assert (cut.calibrated, cut.margin, cut.fixed_threshold) == (True, True, None)
    assert cut.resolved_score() == "margin"


def test_a_fixed_threshold_is_a_cosine_parsed_from_text() -> None:
    cut = CutOptions(threshold="0.85")
    assert (cut.calibrated, cut.margin, cut.fixed_threshold) == (False, False, 0.85)
    assert cut.resolved_score() == "cosine"


def test_a_calibrated_cosine_is_not_a_margin() -> None:
    cut = CutOptions(score="cosine")
    assert (cut.calibrated, cut.margin) == (True, False)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"threshold": "1.5"}, r"^--threshold 1.5 is not a cosine in \[-1, 1\]"),
        ({"threshold": "high"}, r"^--threshold 'high': give 'auto' or a cosine"),
        ({"score": "rank"}, r"^--score 'rank'; allowed: cosine, margin"),
        ({"threshold": 0.7, "score": "margin"}, r"^--score margin needs --threshold auto"),
    ],
)
def test_a_bad_cut_names_its_flag(values: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        CutOptions(**values)


def test_the_settings_ask_the_cut_options() -> None:
    """The graph reads the cut from the settings' options: the same answers as the options'."""
    settings = MiningSettings(threshold="0.7")
    assert settings.cut_options == CutOptions(threshold=0.7)
    with pytest.raises(UsageError, match=r"^--score margin needs --threshold auto"):
        MiningSettings(threshold="0.7", score="margin")
