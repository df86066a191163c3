"""The manifest's ``threshold``, read as a typed record: the cut a run made and how it chose it.

``manifest.json`` keeps the record as the cut stage writes it (a JSON object
under ``threshold``: ``stages/cut/rules/cuts.py``'s ``choose_cut`` or
``fixed_cut``, then ``mining/threshold_record.py`` adds the kept scores'
summary and the group checks' cuts); its layout is unchanged, so datasets
written before this class read as they did. Code that reads a manifest asks
``Manifest.cut`` for a ``CutRecord`` and uses its attributes, so a misspelt
key is an ``AttributeError`` that mypy finds, not a silent ``None``.

A record written by an older paramine lacks the keys it did not know yet:
those attributes are ``None`` (or empty), as ``dict.get`` gave before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The score summaries a record may hold: the kept pairs' (``aligned``), the
#: calibration sample's as aligned (``aligned_sample``) and the null's
#: (``mismatched``), each ``{"n", "mean", "q02" ... "q98"}``.
SUMMARIES = ("aligned", "aligned_sample", "mismatched")


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
        record: The record as stored, for what is passed on whole (a model's card).
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
    coherence: Mapping[str, Any] | None = None
    support: Mapping[str, Any] | None = None
    hard_negative: Mapping[str, Any] | None = None
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
            coherence=record.get("coherence"),
            support=record.get("support"),
            hard_negative=record.get("hard_negative"),
            record=dict(record),
        )

    @property
    def calibrated(self) -> bool:
        """Whether the cut was calibrated on the run's own mismatched pairs."""
        return self.mode == "auto"

    @property
    def null(self) -> Mapping[str, Any]:
        """The summary of the mismatched pairs' scores (empty where the run made no null)."""
        return self.summaries.get("mismatched", {})
