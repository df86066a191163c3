"""round_gains: a finished loop's rounds judged again by the gain less its standard error."""

from __future__ import annotations

from paramine.encoders.evaluation.paired import PairedGain
from paramine.schemas.adapt_record import AdaptRecord, Round, TrainingStep

from benchmarks.quality.round_gains import judge_rounds


def _record(rounds: int) -> AdaptRecord:
    def trained(number: int) -> TrainingStep:
        return TrainingStep(f"e{number}", f"d{number - 1}", 10, 9, 1, 5, 1.0)

    return AdaptRecord({}, [Round(0), *(Round(r, trained(r)) for r in range(1, rounds + 1))])


def test_each_round_is_compared_with_the_best_before_it_until_one_falls_short() -> None:
    # Eng-tat's rounds (not in shared/): +5.71 ± 1.83, then +0.95 ± 1.51, then +0.5 ± 0.1.
    gains = {(1, 0): (5.71, 1.83), (2, 1): (0.95, 1.51), (3, 2): (0.5, 0.1), (3, 1): (0.9, 0.1)}
    asked: list[tuple[int, int]] = []

    def compare(number: int, against: int) -> PairedGain:
        asked.append((number, against))
        gain, error = gains[(number, against)]
        return PairedGain(105, gain, error, 7)

    judged = judge_rounds(_record(3), compare, min_gain=0.5, min_gain_se=1.0)
    assert [(j.round, j.against, j.kept) for j in judged] == [(1, 0, True), (2, 1, False)]
    assert asked == [(1, 0), (2, 1)]  # the loop stops at round 2: round 3 is not read
    # The gain alone (the rule before --min-gain-se) keeps round 2, and round 3 is read.
    judged = judge_rounds(_record(3), compare, min_gain=0.5, min_gain_se=0.0)
    assert [(j.round, j.against, j.kept) for j in judged] == [
        (1, 0, True),
        (2, 1, True),
        (3, 2, True),
    ]
    assert judge_rounds(_record(0), compare, 0.5, 1.0) == []
