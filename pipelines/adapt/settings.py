"""AdaptSettings: what ``paramine adapt`` adds to ``paramine mine``'s settings: the loop's own.

How many rounds, when to stop, which pivots are held out, and what each
round's training changes from the ``adapt`` recipe. What decides a pass's
pairs is ``MiningSettings`` (its ``model`` is the loop's base); where and how
it runs is ``RunSettings`` (its ``device`` is the training's too).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, ClassVar

from paramine.schemas.options import Settings, option, parse_positive

#: The ``--help`` section of the loop's own flags.
LOOP = "the loop (paramine adapt)"
#: ``--tied-round``: which of two trained rounds within the noise of each other stays.
TIED_ROUNDS = ("earlier", "later")


def parse_share_below_one(value: Any) -> float:
    """A share in [0, 1)."""
    number = float(value)
    if not 0.0 <= number < 1.0:
        raise ValueError(f"{number} is not a share in [0, 1)")
    return number


def parse_held_out(value: Any) -> float:
    """A share of pivots in (0, 0.5]: the stop rule needs some, training the rest."""
    number = float(value)
    if not 0.0 < number <= 0.5:
        raise ValueError(f"{number} is not a share in (0, 0.5]")
    return number


def parse_points(value: Any) -> float:
    """Points of accuracy; a negative number keeps a round that lost that many."""
    return float(value)


def parse_standard_errors(value: Any) -> float:
    """A number of standard errors, 0 or more (0: the gain alone decides)."""
    number = float(value)
    if not number >= 0.0:
        raise ValueError(f"{number} is not a number of standard errors (0 or more)")
    return number


def parse_train_flags(value: Any) -> str:
    """``paramine train`` flags as one string; the loop's own are refused.

    The rest is checked by ``paramine train``'s parser before the loop starts.
    """
    text = str(value)
    owned = ("--base", "--output", "--checkpoint-dir", "--eval-share", "--seeds", "--resume")
    for word in shlex.split(text):
        name = word.split("=", 1)[0]
        if name in owned:
            raise ValueError(f"{name} is the loop's to set; leave it out")
    return text


@dataclass(frozen=True)
class AdaptSettings(Settings):
    """The loop of ``paramine adapt``: its rounds, its stop rule, its held-out pivots."""

    COMMAND: ClassVar[str] = "paramine adapt"

    rounds: int = option(
        3,
        "train and mine again at most this many times after the first pass (default: %(default)s)",
        group=LOOP,
        parse=parse_positive,
    )
    min_gain: float = option(
        0.5,
        "stop when a round's encoder beats the one before by fewer points of held-out bitext "
        "retrieval (acc@1, mean of both directions), less --min-gain-se standard errors of "
        "that gain, and keep the one before; a negative number keeps a round that lost that "
        "many (default: %(default)s)",
        group=LOOP,
        parse=parse_points,
        metavar="POINTS",
    )
    min_gain_se: float = option(
        1.0,
        "standard errors taken off a round's gain before --min-gain reads it: the round's "
        "encoder and the one before are scored line by line on the same held-out lines, so a "
        "gain within the noise of those lines (on 105 lines one line is 0.95 points) keeps "
        "the one before, as the one-standard-error rule of model selection does; 0 reads the "
        "gain alone (default: %(default)s)",
        group=LOOP,
        parse=parse_standard_errors,
        metavar="SE",
    )
    min_new: float = option(
        0.02,
        "stop when a pass writes fewer new pairs than this share of the pass before's: "
        "another round would change little (default: %(default)s)",
        group=LOOP,
        parse=parse_share_below_one,
        metavar="SHARE",
    )
    tied_round: str = option(
        "earlier",
        "a trained round whose held-out gain over the trained round before it is within the "
        "noise (short of --min-gain less --min-gain-se standard errors, yet no loss beyond "
        "them): earlier keeps the round before; later keeps it, mines with it and stops "
        "there. The held-out lines do not see what a round learned of the lines it mines, "
        "and a later round trains on lines chosen by the better encoder before it: more "
        "recall (Kapampangan 0.64 -> 0.76 at precision 1.0), but that encoder learned some "
        "planted lines too, and the later round may confirm them (Tatar: precision 0.994 -> "
        "0.983). Round 1 must beat the base either way (default: %(default)s)",
        group=LOOP,
        choices=TIED_ROUNDS,
    )
    known_above: float = option(
        80.0,
        "a language the base knows already: when the base finds this many points of the "
        "held-out lines or more (acc@1, mean of both directions, read before round 1 "
        "trains), the loop keeps the base and its first pass (on Tatoeba eng-pol, base 89.2, "
        "a round cost the eight Polish tasks 1.0 point on average); 100 always trains "
        "(default: %(default)s)",
        group=LOOP,
        parse=parse_points,
        metavar="POINTS",
    )
    held_out: float = option(
        0.1,
        "share of pivots held out by hash: their lines never reach training, and the stop rule "
        "reads them (default: %(default)s)",
        group=LOOP,
        parse=parse_held_out,
        metavar="SHARE",
    )
    seed: int = option(
        42, "seed of every round's training (default: %(default)s)", group=LOOP, parse=int
    )
    save_steps: int = option(
        200,
        "checkpoint a round's training every N steps, so a killed loop resumes inside a round "
        "(default: %(default)s)",
        group=LOOP,
        parse=parse_positive,
    )
    train_flags: str = option(
        "",
        "more paramine train flags for every round, over the adapt recipe, e.g. "
        "'--epochs 2' or '--aligned-max-false-accept 1' (default: none)",
        group=LOOP,
        parse=parse_train_flags,
        metavar="FLAGS",
    )
