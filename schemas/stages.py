"""What a stage declares about its books: its name, its unit, and why it may drop.

Each pipeline stage defines one ``Stage`` next to its code; the mining
pipeline lists its stages in order, and the manifest records that list. The
accounting identity is checked against the recorded list, so a new stage or
drop reason needs no edit here or in the manifest code.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paramine.schemas.run_counts import RunCounts

#: Units that stages count in. Consecutive stages of one unit chain: what one
#: keeps is what the next takes in.
ALIGNED_PAIR = "aligned pair"
PARAPHRASE_PAIR = "paraphrase pair"


@dataclass(frozen=True)
class Stage:
    """One ledger of the run's accounting.

    Attributes:
        name: The stage's key in the manifest's counts (``prefilter``).
        unit: What one count is (``ALIGNED_PAIR`` or ``PARAPHRASE_PAIR``).
        reasons: Every reason the stage may drop a record for; ``None`` for
            an open set whose every drop also has a reject row with its
            reason (the readers: docs/formats.md lists them).
        description: One line for the manifest and the report.
    """

    name: str
    unit: str
    reasons: tuple[str, ...] | None
    description: str

    def check_reason(self, reason: str) -> None:
        """Raise if ``reason`` is not one this stage declared (a bug, not bad input)."""
        if self.reasons is not None and reason not in self.reasons:
            raise ValueError(
                f"stage {self.name!r} dropped a record for {reason!r}, which it does not "
                f"declare (declared: {', '.join(self.reasons)})"
            )

    def to_record(self) -> dict[str, Any]:
        """The stage as the manifest records it."""
        return {
            "name": self.name,
            "unit": self.unit,
            "reasons": None if self.reasons is None else list(self.reasons),
            "description": self.description,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Stage:
        """The stage a manifest recorded."""
        reasons = record.get("reasons")
        return cls(
            name=record["name"],
            unit=record["unit"],
            reasons=None if reasons is None else tuple(reasons),
            description=record.get("description", ""),
        )


def accounting_errors(counts: RunCounts, stages: Sequence[Stage]) -> list[str]:
    """Every way in which ``counts`` break the accounting identity of ``stages``.

    For each stage ``in == kept + sum(dropped)``, and every drop reason is one
    the stage declared; consecutive stages of one unit chain (``kept`` of one
    is ``in`` of the next).

    Returns:
        Human-readable violations; empty when the books balance.
    """
    errors = []
    for stage in stages:
        books = counts.get(stage.name)
        if books is None:
            errors.append(f"stage {stage.name!r} has no counts")
            continue
        dropped = books.dropped_total
        if books.taken_in != books.kept + dropped:
            errors.append(
                f"{stage.name}: in={books.taken_in} but kept={books.kept} + dropped={dropped} "
                f"({dict(books.dropped)}) = {books.kept + dropped}"
            )
        if stage.reasons is not None:
            unknown = sorted(set(books.dropped) - set(stage.reasons))
            if unknown:
                errors.append(f"{stage.name}: undeclared drop reasons {unknown}")
    for before, after in itertools.pairwise(stages):
        if before.unit != after.unit:
            continue
        done, next_one = counts.get(before.name), counts.get(after.name)
        if done is not None and next_one is not None and done.kept != next_one.taken_in:
            errors.append(
                f"{before.name} kept {done.kept} but {after.name} took in {next_one.taken_in}"
            )
    return errors
