"""The manifest's ``threshold`` as a typed record: the cut a run made and how it chose it.

The cut stage builds it (``stages/cut/rules/cuts.py``'s ``choose_cut`` or
``fixed_cut``; ``CalibrateThreshold`` adds the calibration's report, and
``mining/threshold_record.py`` the kept scores' summary and the group
checks' cuts), the graph passes it on as this class, and ``to_json`` writes
it under ``threshold`` in ``manifest.json`` in the layout paramine always
wrote, so datasets written before this class read as they did. Code that
reads a manifest asks ``Manifest.cut`` for a ``CutRecord`` (``read``) and
uses its attributes, so a misspelt key is an ``AttributeError`` that mypy
finds, not a silent ``None``.

A record written by an older paramine lacks the keys it did not know yet:
those attributes are ``None`` (or empty), as ``dict.get`` gave before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

#: The score summaries a record may hold: the kept pairs' (``aligned``), the
#: calibration sample's as aligned (``aligned_sample``) and the null's
#: (``mismatched``), each ``{"n", "mean", "q02" ... "q98"}``.
SUMMARIES = ("aligned", "aligned_sample", "mismatched")

_Check = TypeVar("_Check", bound="_GroupCheck")


@dataclass(frozen=True)
class _GroupCheck:
    """A group check's cut as the manifest keeps it: ``value`` always, the rest where known."""

    value: float | None

    def to_json(self) -> dict[str, Any]:
        """The check's object in the manifest: ``value``, then each field the run knew."""
        return {k: v for k, v in asdict(self).items() if k == "value" or v is not None}

    @classmethod
    def read(cls: type[_Check], record: Mapping[str, Any] | None) -> _Check | None:
        """The typed check of a manifest's object; ``None`` where the run made none."""
        if record is None:
            return None
        names = {f.name for f in fields(cls)} - {"value"}
        return cls(record.get("value"), **{k: v for k, v in record.items() if k in names})


@dataclass(frozen=True)
class CoherenceRecord(_GroupCheck):
    """The group-coherence check's cut (``thresholds/coherence.py``'s ``coherence_cut``).

    Attributes:
        value: The cosine that only the check's share of unrelated candidates
            reach; ``None``: too few candidates, the check is skipped.
        null_pairs: Unrelated candidate pairs the cut was taken from.
    """

    null_pairs: int | None = None


@dataclass(frozen=True)
class SupportRecord(_GroupCheck):
    """Group support's cuts (``support_record``): the score floor and the group-mate cosine.

    Attributes:
        floor: The score a pair needs to wait for a group-mate's support.
        floor_false_accept: The share of mismatched pairs the floor lets through.
        value: The cosine to a group-mate that passed the cut that keeps a
            pair between the floor and the cut; ``None``: no pair below the cut stays.
        false_accept: The share of unrelated candidates that reach ``value``.
        null_pairs: Unrelated candidate pairs ``value`` was taken from.
    """

    floor: float | None = None
    floor_false_accept: float | None = None
    false_accept: float | None = None
    null_pairs: int | None = None

    def to_json(self) -> dict[str, Any]:
        """As paramine writes it: ``floor`` and its share first, then the cosine."""
        names = ("floor", "floor_false_accept", "value", "false_accept", "null_pairs")
        record = super().to_json()
        return {name: record[name] for name in names if name in record}


@dataclass(frozen=True)
class HardNegativeRecord(_GroupCheck):
    """The hard-negative check's cut (``hard_negative_cut``).

    Attributes:
        value: The cosine that only ``accept`` of the run's hard negatives
            reach; ``None``: too few hard negatives were found.
        hard_negatives: Hard negatives found among the kept candidates.
        accept: The share of hard negatives allowed at or above the cut.
    """

    hard_negatives: int | None = None
    accept: float | None = None


@dataclass(frozen=True)
class CutRecord:
    """The cut of one run (``Manifest.cut``), read from its manifest's ``threshold``.

    Attributes:
        value: The cut, on the scale of ``score``; ``None``: no cut (``--threshold`` none).
        mode: ``auto`` (calibrated on the run's mismatched pairs) or ``fixed``.
        score: What the cut applies to: ``cosine`` or ``margin``.
        margin_k: With the margin: neighbours averaged per side.
        max_false_accept: With ``auto``: the share of mismatched pairs let through.
        mismatched_kept: The share of the null at or above the cut (the expected false accept).
        aligned_sample_kept: The share of the calibration sample, as aligned, that the cut keeps.
        fallback: Why the cut is the fallback value (too few mismatched pairs), if it is.
        warning: What the user is told about the cut (a sample too small to trust).
        sample: Pairs in the calibration sample.
        shifts: Shifts of the sample that made the null.
        summaries: The score summaries the record holds (``SUMMARIES``), by name.
        mismatched_percentiles: The null's percentiles 0 to 100 (newer records).
        histograms: The calibration's bins: ``edges`` and counts per summary name.
        borderline: Pairs just ``above`` and ``below`` the cut.
        coherence: The group-coherence check's cut, where the run made one.
        support: The group-support rescue's cuts, where the run made them.
        hard_negative: The hard-negative check's cut, where the run made one.
        record: The record as stored, where it was read (``read``); empty where built.
    """

    value: float | None
    mode: str | None = None
    score: str = "cosine"
    margin_k: int | None = None
    max_false_accept: float | None = None
    mismatched_kept: float | None = None
    aligned_sample_kept: float | None = None
    fallback: str | None = None
    warning: str | None = None
    sample: int | None = None
    shifts: int | None = None
    summaries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    mismatched_percentiles: tuple[float, ...] = ()
    histograms: Mapping[str, Any] = field(default_factory=dict)
    borderline: Mapping[str, Any] = field(default_factory=dict)
    coherence: CoherenceRecord | None = None
    support: SupportRecord | None = None
    hard_negative: HardNegativeRecord | None = None
    record: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def read(cls, record: Mapping[str, Any]) -> CutRecord:
        """The typed view of a manifest's ``threshold`` object, of any layout paramine wrote."""
        value = record.get("value")
        margin_k = record.get("margin_k")
        return cls(
            value=None if value is None else float(value),
            mode=record.get("mode"),
            score=record.get("score") or "cosine",
            margin_k=None if margin_k is None else int(margin_k),
            max_false_accept=record.get("max_false_accept"),
            mismatched_kept=record.get("mismatched_kept"),
            aligned_sample_kept=record.get("aligned_sample_kept"),
            fallback=record.get("fallback"),
            warning=record.get("warning"),
            sample=record.get("sample"),
            shifts=record.get("shifts"),
            summaries={name: record[name] for name in SUMMARIES if record.get(name)},
            mismatched_percentiles=tuple(record.get("mismatched_percentiles") or ()),
            histograms=record.get("histograms") or {},
            borderline=record.get("borderline") or {},
            coherence=CoherenceRecord.read(record.get("coherence")),
            support=SupportRecord.read(record.get("support")),
            hard_negative=HardNegativeRecord.read(record.get("hard_negative")),
            record=dict(record),
        )

    def to_json(self) -> dict[str, Any]:
        """The record as ``manifest.json`` keeps it under ``threshold``: ``read`` gives it back.

        A key is written where the run made it: a fixed cut has ``mode``,
        ``value`` and ``score``; a calibrated one its null and what the cut
        kept; ``CalibrateThreshold``'s report (``histograms``, ``borderline``,
        ``sample``, ``shifts``) where it made one, even from a sample too
        small to use.
        """
        record: dict[str, Any] = {"mode": self.mode} if self.mode is not None else {}
        optional: dict[str, Any] = {
            "max_false_accept": self.max_false_accept,
            "mismatched": self.summaries.get("mismatched"),
            "aligned_sample": self.summaries.get("aligned_sample"),
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        record["value"] = self.value
        optional = {
            "fallback": self.fallback,
            "aligned_sample_kept": self.aligned_sample_kept,
            "mismatched_kept": self.mismatched_kept,
            "mismatched_percentiles": list(self.mismatched_percentiles) or None,
            "support": self.support and self.support.to_json(),
            "warning": self.warning,
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        record["score"] = self.score
        if self.margin_k is not None:
            record["margin_k"] = self.margin_k
        if self.sample is not None:  # the calibration's report (CalibrateThreshold)
            record["histograms"] = dict(self.histograms)
            record["borderline"] = dict(self.borderline)
            record["sample"] = self.sample
            record["shifts"] = self.shifts
        optional = {
            "aligned": self.summaries.get("aligned"),
            "coherence": self.coherence and self.coherence.to_json(),
            "hard_negative": self.hard_negative and self.hard_negative.to_json(),
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        return record

    @property
    def calibrated(self) -> bool:
        """Whether the cut was calibrated on the run's own mismatched pairs."""
        return self.mode == "auto"

    @property
    def null(self) -> Mapping[str, Any]:
        """The summary of the mismatched pairs' scores (empty where the run made no null)."""
        return self.summaries.get("mismatched", {})
