"""``paramine adapt``'s progress lines: one when a step starts, one when it ends.

On stderr, as every progress line of paramine; the rounds' table at the end
is :func:`paramine.pipelines.adapt.command.rounds_table`'s.
"""

from __future__ import annotations

import sys
from typing import Any

from paramine.schemas.adapt_record import Round, TrainingStep, held_out_score


def say(text: str) -> None:
    """A progress line of the loop, on stderr as every progress line."""
    print(f"paramine adapt: {text}", file=sys.stderr, flush=True)


def pass_line(round_: Round) -> str:
    """A pass's progress line: pairs, new pairs, the cut, the time."""
    mined = round_.mining
    assert mined is not None
    new = "" if mined.new_pairs is None else f" ({mined.new_pairs:,} new)"
    return (
        f"round {round_.round}: {mined.pairs:,} pairs{new}, {mined.held_out_pairs:,} of held-out "
        f"pivots; cut {mined.cut} ({mined.score}); mined in {mined.seconds:,.0f} s"
    )


def training_line(number: int, step: TrainingStep, before: float | None) -> str:
    """A training's progress line: rows, steps, held-out retrieval before and after, the time."""
    score = held_out_score(step.held_out)
    figures = "no held-out lines"
    if score is not None and before is not None:
        figures = f"held-out bitext retrieval {before:.2f} -> {score:.2f}"
    return (
        f"round {number}: trained on {step.rows:,} rows ({step.aligned_lines:,} aligned lines, "
        f"{step.dropped_mismatched:,} left out as mismatched), {step.steps:,} steps in "
        f"{step.seconds:,.0f} s; {figures}"
    )


def gain_line(number: int, gain: dict[str, Any]) -> str:
    """A comparison's progress line: the gain over the best encoder before, and its noise."""
    return (
        f"round {number}: {gain['gain']:+.2f} ± {gain['standard_error']:.2f} points over round "
        f"{gain['against']}'s encoder, line by line on {gain['lines']:,} held-out lines "
        f"({gain['changed']:,} changed)"
    )
