"""The report's section on a ``paramine adapt`` loop, and the rounds table the command prints."""

from __future__ import annotations

from paramine.pipelines.adapt.command import rounds_table
from paramine.pipelines.report.adapt_section import adapt_section
from paramine.schemas.adapt_record import (
    HELD_OUT_METRICS,
    AdaptRecord,
    MiningPass,
    Round,
    TrainingStep,
)


def _record() -> AdaptRecord:
    def mined(number: int, pairs: int, new: int | None) -> MiningPass:
        return MiningPass(f"d{number}", "m", pairs, pairs // 10, None, new, 0.9, "margin", 10.0)

    def trained(number: int, points: float, gain: dict | None) -> TrainingStep:
        held = {name: points / 100 for name in HELD_OUT_METRICS}
        base = {name: 0.6429 for name in HELD_OUT_METRICS}
        return TrainingStep(f"e{number}", "d", 1000, 900, 100, 50, 60.0, held, base, gain)

    one = {"lines": 105, "gain": 5.7143, "standard_error": 1.83, "changed": 13, "against": 0}
    two = {"lines": 105, "gain": 0.9524, "standard_error": 1.5102, "changed": 7, "against": 1}
    return AdaptRecord(
        settings={},
        rounds=[
            Round(0, None, mined(0, 134, None)),
            Round(1, trained(1, 70.0, one), mined(1, 164, 33)),
            Round(2, trained(2, 70.95, two), None),
        ],
        stopped="round 2's encoder gained +0.95 ± 1.51 points on 105 held-out lines",
        final_round=1,
        dataset="out/dataset",
        encoder="out/encoder",
    )


def test_the_section_shows_each_rounds_gain_and_its_standard_error() -> None:
    page = adapt_section(_record().to_record())
    assert "<td class='n'>+5.71 &plusmn; 1.83</td>" in page
    assert "<td class='n'>+0.95 &plusmn; 1.51</td>" in page
    assert "<td>1 (final)</td>" in page and "--min-gain-se" in page
    assert page.count("<tr>") == 4  # the header and three rounds
    assert adapt_section(None) == ""


def test_the_printed_table_shows_the_gains_too() -> None:
    table = rounds_table(_record())
    rows = table.splitlines()
    assert "70.00 (+5.71 ± 1.83)" in rows[3] and "70.95 (+0.95 ± 1.51)" in rows[4]
    assert "64.29 (base)" in rows[2]
    assert rows[-2] == "  dataset: out/dataset"
