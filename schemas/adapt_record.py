"""The record of a ``paramine adapt`` loop: each round's training and pass, and why it stopped.

Written as ``adapt.json`` in the loop's folder after every step (so a killed
loop resumes at the last finished step), and into the final dataset's
manifest (``extra.adapt``), where its report, stats and printed summary read
it. Plain JSON types throughout; ``ADAPT_RECORD_VERSION`` names the layout.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

ADAPT_RECORD_VERSION = "paramine.adapt/1"

#: The held-out figures the stop rule reads: bitext retrieval on the lines of
#: held-out pivots, both ways (``paramine train``'s evaluator names).
HELD_OUT_METRICS = ("bitext held-out lines src2trg", "bitext held-out lines trg2src")


@dataclass
class TrainingStep:
    """One round's training: the encoder it made, what it read, and its held-out figures.

    Attributes:
        encoder: The model folder.
        dataset: The pass it trained on.
        rows: Training rows (paraphrase pairs and aligned lines).
        aligned_lines: Aligned lines among them.
        dropped_mismatched: Aligned lines left out as scoring like mismatched pairs.
        steps: Optimizer steps.
        seconds: Wall time of the training, its evaluations included.
        held_out: The trained encoder's figures on held-out pivots (accuracy, 0-1).
        held_out_base: The base's figures on the same lines.
        gain: Its gain over the best encoder before it on the held-out lines,
            compared line by line (``lines``, ``gain`` and ``standard_error``
            in points, ``changed``, and ``against``: that encoder's round, 0
            for the base); None until compared, or without held-out lines.
    """

    encoder: str
    dataset: str
    rows: int
    aligned_lines: int
    dropped_mismatched: int
    steps: int
    seconds: float
    held_out: dict[str, float] = field(default_factory=dict)
    held_out_base: dict[str, float] = field(default_factory=dict)
    gain: dict[str, Any] | None = None


@dataclass
class MiningPass:
    """One mining pass: its dataset, the encoder it scored with, what it wrote.

    Attributes:
        dataset: The dataset folder.
        model: The encoder (a name ``paramine models`` resolves, or a folder).
        pairs: Pairs written.
        held_out_pairs: Pairs of held-out pivots among them.
        new_held_out_pairs: Of those, pairs the pass before did not write (None for the first).
        new_pairs: Pairs the pass before did not write (None for the first).
        cut: The calibrated cut, on the ``score``'s scale.
        score: ``cosine`` or ``margin``.
        seconds: Wall time of the pass.
    """

    dataset: str
    model: str
    pairs: int
    held_out_pairs: int
    new_held_out_pairs: int | None
    new_pairs: int | None
    cut: float | None
    score: str | None
    seconds: float


@dataclass
class Round:
    """Round 0 is the first pass with the base; round r >= 1 trains, then mines."""

    round: int
    training: TrainingStep | None = None
    mining: MiningPass | None = None


@dataclass
class AdaptRecord:
    """A loop: its settings, its rounds, and, once it stopped, why and which round is final.

    Attributes:
        settings: The loop's settings (mining, run and loop) as given: a
            resumed loop must have the same.
        rounds: The rounds in order, each as far as it got.
        held_out_base: The base's figures on the held-out lines, read before
            round 1 trains (the ``--known-above`` check); None until then, or
            where the check is off.
        stopped: Why the loop stopped; None while it runs.
        final_round: The round whose dataset and encoder the loop leaves.
        dataset: Where the final dataset is; ``encoder``: the final encoder
            (None where the base stayed the best).
    """

    settings: dict[str, Any]
    rounds: list[Round] = field(default_factory=list)
    held_out_base: dict[str, float] | None = None
    stopped: str | None = None
    final_round: int | None = None
    dataset: str | None = None
    encoder: str | None = None
    version: str = ADAPT_RECORD_VERSION

    def to_record(self) -> dict[str, Any]:
        """Plain JSON types, as ``adapt.json`` and the manifest hold it."""
        return dataclasses.asdict(self)

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> AdaptRecord:
        """The record ``to_record`` wrote.

        Raises:
            ValueError: Another layout version.
        """
        if data.get("version") != ADAPT_RECORD_VERSION:
            raise ValueError(
                f"adapt record version {data.get('version')!r}; this paramine reads "
                f"{ADAPT_RECORD_VERSION!r}"
            )
        rounds = [
            Round(
                r["round"],
                TrainingStep(**r["training"]) if r.get("training") else None,
                MiningPass(**r["mining"]) if r.get("mining") else None,
            )
            for r in data.get("rounds", [])
        ]
        fields = {k: v for k, v in data.items() if k not in ("rounds",)}
        return cls(rounds=rounds, **fields)

    def round(self, number: int) -> Round:
        """Round ``number``, made when the loop reaches it."""
        while len(self.rounds) <= number:
            self.rounds.append(Round(len(self.rounds)))
        return self.rounds[number]


def held_out_score(figures: dict[str, float]) -> float | None:
    """The stop rule's figure: held-out bitext retrieval acc@1, both ways' mean, in points."""
    values = [figures[name] for name in HELD_OUT_METRICS if name in figures]
    return 100.0 * sum(values) / len(values) if values else None
