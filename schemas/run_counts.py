"""The manifest's ``counts``, typed: each stage's books and the run's figures beside them.

A run counts in rows of ``(stage, key, n)`` (``pipelines/core/accounting.py``)
and folds them into one ``RunCounts``: a ``StageCounts`` per ledger (what
the stage took in, kept, and dropped by reason) and the run's notes, figures
outside the accounting identity (``repairs``, ``encoding``, a refresh's
``table``, ``unchecked`` lines, ``line_checks``). ``manifest.json`` keeps
the layout it always had, both in one object::

    {"Prefilter": {"in": 10, "kept": 8, "dropped": {"empty": 2}},
     "encoding": {"texts_encoded": 12}}

so datasets written before this class read as they did (``RunCounts.read``
tells a note by its name, ``NOTES``). The accounting check,
the summary, the report and refresh read the books through attributes
(``Manifest.books``), so a misspelt key is an ``AttributeError`` that mypy
finds, not a silent zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ENCODING",
    "LINE_CHECKS",
    "NOTES",
    "REPAIRS",
    "TABLE",
    "UNCHECKED",
    "RunCounts",
    "StageCounts",
]

#: Records kept after a repair (invalid UTF-8 replaced ...), by repair: kept
#: and counted by their stage, so no part of any ledger.
REPAIRS = "repairs"
#: Figures of the encoder (texts encoded), beside the ledgers like repairs.
ENCODING = "encoding"
#: Figures of a refresh's rewrite of its table (pipelines/refresh/job.py):
#: old pairs written again as they were, old pairs replaced, rows written.
TABLE = "table"
#: Lines a check could not judge and let through, counted per check and
#: language (``language_unchecked.bo``): kept, and counted by their stage.
UNCHECKED = "unchecked"
#: The prefilter's figures of each side's lines (``stages/filter/rules/line_checks.py``).
LINE_CHECKS = "line_checks"
#: Pseudo-stages whose rows are figures, not a ledger: ``{name: n}`` in the
#: manifest's counts, outside the accounting identity.
NOTES = (REPAIRS, ENCODING, TABLE, UNCHECKED, LINE_CHECKS)


@dataclass(frozen=True)
class StageCounts:
    """One stage's books: ``taken_in == kept + sum(dropped.values())`` when they balance.

    Attributes:
        taken_in: The records the stage took in (``in`` in the manifest).
        kept: The records it passed on.
        dropped: The records it dropped, by reason, reasons in sorted order.
    """

    taken_in: int
    kept: int
    dropped: Mapping[str, int] = field(default_factory=dict)

    @property
    def dropped_total(self) -> int:
        """Every record the stage dropped, whatever the reason."""
        return sum(self.dropped.values())

    def to_json(self) -> dict[str, Any]:
        """The stage's books as ``manifest.json`` holds them."""
        return {
            "in": self.taken_in,
            "kept": self.kept,
            "dropped": dict(sorted(self.dropped.items())),
        }

    @classmethod
    def read(cls, record: Mapping[str, Any]) -> StageCounts:
        """The books a manifest recorded; ``in`` is kept + dropped where it is missing."""
        dropped = {str(k): int(v) for k, v in sorted((record.get("dropped") or {}).items())}
        kept = int(record.get("kept", 0))
        taken_in = record.get("in")
        return cls(
            taken_in=kept + sum(dropped.values()) if taken_in is None else int(taken_in),
            kept=kept,
            dropped=dropped,
        )


@dataclass(frozen=True)
class RunCounts:
    """What a run counted: its stages' books by stage name, and its notes by name.

    Attributes:
        stages: Each ledger's books, by the stage's name (``Prefilter``).
        notes: Figures outside the ledgers (``encoding``: ``{texts_encoded:
            n}``), by the note's name.
    """

    stages: Mapping[str, StageCounts] = field(default_factory=dict)
    notes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def stage(self, name: str) -> StageCounts:
        """The books of stage ``name``; ``KeyError`` naming it and the stages counted."""
        try:
            return self.stages[name]
        except KeyError:
            raise KeyError(
                f"no counts for stage {name!r} (counted: {', '.join(self.stages) or 'none'})"
            ) from None

    def get(self, name: str) -> StageCounts | None:
        """The books of stage ``name``, None where the run did not count it."""
        return self.stages.get(name)

    def note(self, name: str) -> Mapping[str, int]:
        """The figures of note ``name``; empty where the run recorded none."""
        return self.notes.get(name, {})

    def dropped(self, reason: str, stages: tuple[str, ...] | list[str] | None = None) -> int:
        """The records dropped for ``reason`` by ``stages`` (every stage by default)."""
        names = self.stages if stages is None else stages
        return sum(self.stages[n].dropped.get(reason, 0) for n in names if n in self.stages)

    def to_json(self) -> dict[str, Any]:
        """The counts as ``manifest.json`` holds them: ledgers and notes in one object."""
        out: dict[str, Any] = {name: books.to_json() for name, books in self.stages.items()}
        out.update({name: dict(sorted(figures.items())) for name, figures in self.notes.items()})
        return out

    @classmethod
    def read(cls, data: Mapping[str, Any] | None) -> RunCounts:
        """The counts a manifest (or a refresh's summary) recorded, ledgers told from notes."""
        stages: dict[str, StageCounts] = {}
        notes: dict[str, dict[str, int]] = {}
        for name, record in (data or {}).items():
            if name in NOTES:
                notes[name] = {str(k): int(v) for k, v in (record or {}).items()}
            else:
                stages[name] = StageCounts.read(record)
        return cls(stages=stages, notes=notes)
