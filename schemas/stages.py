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


def accounting_errors(
    counts: Mapping[str, Mapping[str, Any]], stages: Sequence[Stage]
) -> list[str]:
    """Every way in which ``counts`` break the accounting identity of ``stages``.

    For each stage ``in == kept + sum(dropped)``, and every drop reason is one
    the stage declared; consecutive stages of one unit chain (``kept`` of one
    is ``in`` of the next).

    Returns:
        Human-readable violations; empty when the books balance.
    """
    errors = []
    for stage in stages:
        c = counts.get(stage.name)
        if c is None:
            errors.append(f"stage {stage.name!r} has no counts")
            continue
        dropped = sum(c["dropped"].values())
        if c["in"] != c["kept"] + dropped:
            errors.append(
                f"{stage.name}: in={c['in']} but kept={c['kept']} + dropped={dropped} "
                f"({c['dropped']}) = {c['kept'] + dropped}"
            )
        if stage.reasons is not None:
            unknown = sorted(set(c["dropped"]) - set(stage.reasons))
            if unknown:
                errors.append(f"{stage.name}: undeclared drop reasons {unknown}")
    for before, after in itertools.pairwise(stages):
        if before.unit != after.unit:
            continue
        if before.name in counts and after.name in counts:
            kept, taken = counts[before.name]["kept"], counts[after.name]["in"]
            if kept != taken:
                errors.append(f"{before.name} kept {kept} but {after.name} took in {taken}")
    return errors
