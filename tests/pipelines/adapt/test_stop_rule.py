"""The loop's rule on its own: a gain, its standard error, the tie."""

from __future__ import annotations

import pytest
from paramine.pipelines.adapt.settings import AdaptSettings
from paramine.pipelines.adapt.stop_rule import judge, needs_error
from paramine.schemas.errors import UsageError
from paramine.schemas.options import parse_config


def test_a_clear_gain_is_kept_and_the_loop_goes_on() -> None:
    judged = judge(5.71, 1.83, 105, AdaptSettings(), tie_allowed=True, against=0)
    assert judged.keep and judged.go_on
    assert judged.why == "gained +5.71 ± 1.83 points on 105 held-out lines"


def test_a_gain_within_the_noise_keeps_the_one_before_unless_a_tie_is_allowed() -> None:
    # Eng-tat's round 2 (not in shared/): +0.95 on 105 lines, standard error 1.51.
    refused = judge(0.95, 1.51, 105, AdaptSettings(), tie_allowed=False, against=1)
    assert not refused.keep and not refused.go_on
    assert refused.why.endswith(": -0.56 with 1 standard error off (< 0.5)")
    tie = judge(0.95, 1.51, 105, AdaptSettings(), tie_allowed=True, against=1)
    assert tie.keep and not tie.go_on
    assert tie.why.endswith("(< 0.5), a tie with round 1: the later kept")


def test_a_loss_beyond_the_noise_is_never_a_tie() -> None:
    lost = judge(-3.0, 1.0, 105, AdaptSettings(), tie_allowed=True, against=1)
    assert not lost.keep
    within = judge(-0.9, 1.0, 105, AdaptSettings(), tie_allowed=True, against=1)
    assert within.keep and not within.go_on
    # Read without a standard error (--min-gain-se 0), any loss is one.
    plain = AdaptSettings(min_gain_se=0.0)
    assert not judge(-0.1, 0.0, 0, plain, tie_allowed=True, against=1).keep
    assert judge(0.0, 0.0, 0, plain, tie_allowed=True, against=1).keep
    # A negative --min-gain allows that loss and goes on.
    allowed = AdaptSettings(min_gain=-4.0)
    assert judge(-3.0, 1.0, 105, allowed, tie_allowed=False, against=1).go_on


def test_the_standard_error_is_read_only_where_it_can_change_the_answer() -> None:
    settings = AdaptSettings()
    assert needs_error(0.6, settings, tie_allowed=False)  # it may take the gain under 0.5
    assert not needs_error(0.4, settings, tie_allowed=False)  # refused either way
    assert not needs_error(0.4, settings, tie_allowed=True)  # a tie either way
    assert needs_error(-0.4, settings, tie_allowed=True)  # a loss, or a tie within the noise
    assert not needs_error(-0.4, settings, tie_allowed=False)
    assert not needs_error(0.6, AdaptSettings(min_gain_se=0.0), tie_allowed=True)


def test_the_tie_is_a_flag_of_the_loop_with_two_answers() -> None:
    assert AdaptSettings().tied_round == "earlier"
    parsed = parse_config(AdaptSettings, "paramine adapt", "", ["--tied-round", "later"])
    assert parsed.tied_round == "later"
    with pytest.raises(UsageError, match="--tied-round: invalid choice: 'sooner'"):
        parse_config(AdaptSettings, "paramine adapt", "", ["--tied-round", "sooner"])
