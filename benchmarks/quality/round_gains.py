"""A finished ``paramine adapt`` loop's rounds, judged again line by line on its held-out lines.

Each round's encoder is compared with the best one before it (the base for
round 1) on the held-out lines its training scored, as the loop does since
``--min-gain-se``: the gain, its standard error, and whether the rule keeps
the round. The rounds' trainings do not depend on where the loop stops, so
a loop run before the rule, or with other ``--min-gain`` / ``--min-gain-se``,
is judged here as the loop would judge it now::

    python -m benchmarks.quality.round_gains W/adapt [--min-gain 0.5] [--min-gain-se 1]

It prints one line a round, and the round the rule keeps.
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from paramine.encoders.evaluation.paired import PairedGain
from paramine.schemas.adapt_record import AdaptRecord


@dataclass(frozen=True)
class Judged:
    """One round's comparison and what the rule makes of it."""

    round: int
    against: int
    gain: PairedGain
    kept: bool


def judge_rounds(
    record: AdaptRecord,
    compare: Callable[[int, int], PairedGain],
    min_gain: float,
    min_gain_se: float,
) -> list[Judged]:
    """Each trained round against the best before it, until the rule stops the loop.

    ``compare(round, against)`` scores round ``round``'s encoder against
    round ``against``'s (0: the base) on round ``round``'s held-out lines.
    """
    judged: list[Judged] = []
    best = 0
    for round_ in record.rounds[1:]:
        if round_.training is None:
            break
        gain = compare(round_.round, best)
        kept = gain.gain - min_gain_se * gain.standard_error >= min_gain
        judged.append(Judged(round_.round, best, gain, kept))
        if not kept:
            break
        best = round_.round
    return judged


def loop_comparer(folder: Path, record: AdaptRecord) -> Callable[[int, int], PairedGain]:
    """Compare two of the loop's encoders as the loop does: its training settings, its lines."""
    from paramine.encoders.training.config import TrainConfig
    from paramine.encoders.training.held_out import compare_encoders
    from paramine.schemas.options import parse_config

    loop, base = record.settings["loop"], record.settings["mining"]["model"]

    def compare(number: int, against: int) -> PairedGain:
        step = record.rounds[number].training
        assert step is not None
        argv = [step.dataset, "--base", base, "--output", str(folder / "judged")]
        argv += ["--recipe", "adapt", "--eval-share", str(loop["held_out"])]
        argv += ["--seed", str(loop["seed"]), *shlex.split(loop["train_flags"])]
        config = parse_config(TrainConfig, "paramine train", "", argv)
        before = record.rounds[against].training
        found = compare_encoders(config, before.encoder if before else None, step.encoder)
        if found is None:
            raise SystemExit(f"{step.dataset}: no held-out lines to compare on")
        return found

    return compare


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("loop", type=Path, help="the loop's folder (paramine adapt --output)")
    parser.add_argument("--min-gain", type=float, default=0.5)
    parser.add_argument("--min-gain-se", type=float, default=1.0)
    args = parser.parse_args(argv)
    record = AdaptRecord.from_record(json.loads((args.loop / "adapt.json").read_text()))
    judged = judge_rounds(record, loop_comparer(args.loop, record), args.min_gain, args.min_gain_se)
    for row in judged:
        gain = row.gain
        print(
            f"round {row.round} against {row.against}: {gain.gain:+.2f} ± "
            f"{gain.standard_error:.2f} points on {gain.lines:,} lines ({gain.changed} changed), "
            f"{'kept' if row.kept else 'stop'}"
        )
    kept = [row.round for row in judged if row.kept]
    print(f"final round: {kept[-1] if kept else 0} (the loop recorded {record.final_round})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
