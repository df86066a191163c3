"""The manifest's ``extra.line_checks``, typed: what the per-line checks decided of each side.

The filter stage builds one per side (``candidate:pl``, ``pivot:en`` ...;
``stages/filter/rules/line_check_record.py``'s ``run_record``) and writes it
as a JSON object (``to_json``): the scripts the side's lines were judged
against and where they came from, the languages present, the typical length
ratio to each pivot language, what each check dropped and the checks flagged
for dropping too much. ``manifest.json`` and ``stats.json`` keep that layout, so datasets
written before this class read as they did; the summary, the report and
refresh's log read the sides through :meth:`SideChecks.read`
(``Manifest.line_checks``), so a misspelt key is an ``AttributeError`` that
mypy finds, not a silent ``None``. A record written by an older paramine
lacks the keys it did not know yet: those attributes are empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Dropped:
    """The lines of a side that one check dropped, and their share of the side's lines."""

    lines: int
    share: float


@dataclass(frozen=True)
class Flag:
    """A check that dropped more of a side's lines than a check should, with dropped lines.

    ``samples``: dropped lines as the filter keeps them (``file`` or
    ``shard``, ``line``, ``pivot``, ``candidate``, ``hash``).
    """

    reason: str
    lines: int
    share: float
    samples: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class SideChecks:
    """What the per-line checks decided of one side (``Manifest.line_checks[side]``).

    Attributes:
        lines: The side's lines this run read.
        decided_on_lines: The lines the decisions were made on: this run's
            and, in a refresh, those of the table's earlier commits.
        decided_on_earlier: Of those, the earlier commits' lines.
        judged_against: The scripts the side's lines were judged against;
            None where no script is known or learned (not judged).
        source: Where they came from (``tables``, ``learned``, ``declared`` ...).
        known: The language's scripts in the tables (CLDR's primary ones).
        known_secondary: Its secondary scripts (Deseret for English).
        learned: Scripts learned from the side's own lines, with their share.
        shares: Each script's share of the side's lines that have one.
        languages_present: Languages found by strong evidence, with their lines.
        length_ratio_to: The side's typical length ratio to each pivot language.
        judged_by_detector: Lines the language detector judged.
        dropped: Each check that dropped lines of the side, most first.
        flagged: The checks that dropped more than a check should.
        moved: What the run's lines changed of the earlier lines' decisions
            (a refresh): ``{what: [before, after]}``.
    """

    lines: int
    decided_on_lines: int
    decided_on_earlier: int = 0
    judged_against: tuple[str, ...] | None = None
    source: str = ""
    known: tuple[str, ...] = ()
    known_secondary: tuple[str, ...] = ()
    learned: Mapping[str, float] = field(default_factory=dict)
    shares: Mapping[str, float] = field(default_factory=dict)
    languages_present: Mapping[str, int] = field(default_factory=dict)
    length_ratio_to: Mapping[str, float] = field(default_factory=dict)
    judged_by_detector: int = 0
    dropped: Mapping[str, Dropped] = field(default_factory=dict)
    flagged: tuple[Flag, ...] = ()
    moved: Mapping[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The side's object as ``manifest.json`` keeps it: ``read`` gives it back."""
        return {
            "lines": self.lines,
            # The lines the decisions were made on: this run's and earlier runs'.
            "decided_on": {"lines": self.decided_on_lines, "earlier": self.decided_on_earlier},
            "scripts": {
                "judged_against": None
                if self.judged_against is None
                else list(self.judged_against),
                "source": self.source,
                "known": list(self.known),
                "known_secondary": list(self.known_secondary),
                "learned": dict(self.learned),
                "shares": dict(self.shares),
            },
            "languages_present": dict(self.languages_present),
            "length_ratio_to": dict(self.length_ratio_to),
            "judged_by_detector": self.judged_by_detector,
            "dropped": {
                reason: {"lines": d.lines, "share": d.share} for reason, d in self.dropped.items()
            },
            "flagged": [
                {"reason": f.reason, "lines": f.lines, "share": f.share, "samples": list(f.samples)}
                for f in self.flagged
            ],
            # What the run's lines changed of the earlier lines' decisions (a refresh).
            "moved": {what: [list(old), list(new)] for what, (old, new) in self.moved.items()},
        }

    @classmethod
    def read(cls, record: Mapping[str, Any]) -> SideChecks:
        """The typed view of one side's object, of any layout paramine wrote."""
        scripts = record.get("scripts") or {}
        judged = scripts.get("judged_against")
        decided_on = record.get("decided_on") or {}
        lines = int(record.get("lines", 0))
        return cls(
            lines=lines,
            decided_on_lines=int(decided_on.get("lines", lines)),
            decided_on_earlier=int(decided_on.get("earlier", 0)),
            judged_against=None if judged is None else tuple(judged),
            source=str(scripts.get("source", "")),
            known=tuple(scripts.get("known") or ()),
            known_secondary=tuple(scripts.get("known_secondary") or ()),
            learned=dict(scripts.get("learned") or {}),
            shares=dict(scripts.get("shares") or {}),
            languages_present=dict(record.get("languages_present") or {}),
            length_ratio_to=dict(record.get("length_ratio_to") or {}),
            judged_by_detector=int(record.get("judged_by_detector", 0)),
            dropped={
                reason: Dropped(int(d["lines"]), float(d["share"]))
                for reason, d in (record.get("dropped") or {}).items()
            },
            flagged=tuple(
                Flag(
                    str(f["reason"]),
                    int(f["lines"]),
                    float(f["share"]),
                    tuple(f.get("samples") or ()),
                )
                for f in record.get("flagged") or ()
            ),
            moved={
                what: (list(old), list(new))
                for what, (old, new) in (record.get("moved") or {}).items()
            },
        )


def read_sides(record: Mapping[str, Any] | None) -> dict[str, SideChecks]:
    """Every side of an ``extra.line_checks`` object (empty for a run that recorded none)."""
    return {side: SideChecks.read(found) for side, found in (record or {}).items()}
